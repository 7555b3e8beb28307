// Which job each running attempt belongs to, for the node map and a node's page: GET /v1/nodes names
// each node's attempts by id only. The running jobs come in one request (an array's running tasks
// in one more each), each job's attempts once per attempt it starts (cached), a few at a time.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "./api";
import { useApp } from "./app-state";
import { attemptIndex, attemptsKey, isFoldedArray, type JobRef } from "./logic/nodes";
import type { Attempt, Job, JobList } from "./logic/types";
import { jobLabel } from "./logic/format";

const live = "STARTING,RUNNING";
// At most this many jobs' attempts are fetched per refresh; the rest follow on the next ones.
const perRefresh = 200;
const parallel = 6;

async function runningJobs(): Promise<Job[]> {
  const list = await api<JobList>(`/v1/jobs?state=${live}&limit=1000`);
  const out: Job[] = [];
  for (const job of list.jobs) {
    if (!isFoldedArray(job)) out.push(job);
    else out.push(...(await api<JobList>(`/v1/jobs?array=${job.array!.job_id}&state=${live}&limit=1000`)).jobs);
  }
  return out;
}

// `wanted`: only asked while some node shown runs something.
export function useAttemptJobs(wanted: boolean): Map<number, JobRef> {
  const { refresh } = useApp();
  const cache = useRef(new Map<string, Attempt[]>());
  const [index, setIndex] = useState<Map<number, JobRef>>(new Map());
  useEffect(() => {
    if (!wanted) return;
    let current = true;
    (async () => {
      const jobs = await runningJobs();
      const missing = jobs.filter((j) => !cache.current.has(attemptsKey(j))).slice(0, perRefresh);
      for (let i = 0; i < missing.length && current; i += parallel) {
        await Promise.all(missing.slice(i, i + parallel).map(async (j) => {
          const answer = await api<{ attempts: Attempt[] }>(`/v1/jobs/${jobLabel(j)}/attempts`).catch(() => undefined);
          if (answer) cache.current.set(attemptsKey(j), answer.attempts);
        }));
      }
      if (!current) return;
      const keep = new Set(jobs.map(attemptsKey));
      for (const key of [...cache.current.keys()]) if (!keep.has(key)) cache.current.delete(key);
      setIndex(attemptIndex(jobs.map((job) => ({ job, attempts: cache.current.get(attemptsKey(job)) ?? [] }))));
    })().catch(() => undefined);
    return () => {
      current = false;
    };
  }, [wanted, refresh]);
  return index;
}
