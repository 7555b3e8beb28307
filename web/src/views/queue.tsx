import { useEffect, useState } from "preact/hooks";
import { api, explain } from "../api";
import { useApi, useApp } from "../app-state";
import { ErrorNote, Section, StateBadge } from "../components/ui";
import { VirtualList } from "../components/virtual-list";
import { count, jobLabel, jobPath, progress, since } from "../logic/format";
import { pagesFor, rowOf } from "../logic/paging";
import { pendingSentence } from "../logic/pending";
import { visibleJobs } from "../logic/roles";
import type { Job, JobList, JobMetrics } from "../logic/types";

// Progress is fetched for the first rows only: one small request each (a single bucket).
const progressRows = 50;

function Progress({ job }: { job: Job }) {
  const metrics = useApi<JobMetrics>(`/v1/jobs/${job.id}/metrics?max_points=1`);
  const points = metrics.data?.points ?? [];
  const last = points[points.length - 1];
  if (!last) return <span>—</span>;
  const workload = job.spec.workload as { steps?: number; global_batch?: number } | undefined;
  return <span>{progress(last.step, workload?.steps, last.samples_per_s, workload?.global_batch)}</span>;
}

interface QueuePage { jobs: Job[]; total: number; next: string | null }

// Pending jobs in the scheduler's order from GET /v1/queue, a page of 200 at a time for the rows in
// view, reloaded on every refresh (positions move as jobs start).
const pageSize = 200;

function PendingQueue() {
  const { refresh } = useApp();
  const [range, setRange] = useState<[number, number]>([0, 30]);
  const [loaded, setLoaded] = useState<{ pages: Map<number, Job[]>; total?: number; error?: string }>({ pages: new Map() });
  // At least the page of the first row in view, which also tells the total while the list is empty.
  const wanted = pagesFor(range[0], Math.max(range[0], range[1]), pageSize);
  useEffect(() => {
    let current = true;
    Promise.all(wanted.map((p) => api<QueuePage>(`/v1/queue?offset=${p * pageSize}&limit=${pageSize}`).then((r) => [p, r] as const)))
      .then((results) => current && setLoaded({
        pages: new Map(results.map(([p, r]) => [p, r.jobs])),
        total: results.length ? results[0][1].total : 0,
      }), (e) => current && setLoaded((l) => ({ ...l, error: explain(e) })));
    return () => {
      current = false;
    };
  }, [refresh, wanted.join(",")]);
  const now = new Date();
  const total = loaded.total ?? 0;
  return (
    <Section title={`Pending (${loaded.total === undefined ? "…" : count(total, "job")}, in the scheduler's order)`}>
      <ErrorNote error={loaded.error} />
      {loaded.total === 0 ? <p>Nothing waits.</p> : (
        <VirtualList items={Array.from({ length: total }, (_, i) => i)} rowHeight={44} height={480} label="Pending jobs"
                     onRange={(first, last) => setRange([first, last])} row={(i) => {
          const j = rowOf(loaded.pages, i, pageSize);
          if (!j) return <div class="queue-row"><span class="pos">{i + 1}</span><span class="muted">loading…</span></div>;
          return (
            <div class="queue-row" data-job={j.id}>
              <span class="pos">{j.queue_position ?? i + 1}</span>
              <a href={jobPath(j)}>#{jobLabel(j)} {j.name}</a>
              <span class="muted">{j.user} · {j.share}</span>
              <span class="reason">{pendingSentence(j, now)}</span>
            </div>
          );
        }} />
      )}
    </Section>
  );
}

export function Queue() {
  const { who } = useApp();
  const running = useApi<JobList>("/v1/jobs?state=RUNNING&limit=1000");
  const now = new Date();
  const active = visibleJobs(who, running.data?.jobs ?? []);
  return (
    <>
      <h1>Queue</h1>
      <ErrorNote error={running.error} />
      <PendingQueue />
      <Section title={`Running (${count(active.length, "job")})`}>
        <table>
          <thead><tr><th>Job</th><th>User</th><th>Share</th><th>State</th><th>Running for</th><th>Progress</th></tr></thead>
          <tbody>
            {active.map((j, i) => (
              <tr key={j.id} data-job={j.id}>
                <td><a href={jobPath(j)}>#{jobLabel(j)} {j.name}</a></td><td>{j.user}</td><td>{j.share}</td>
                <td><StateBadge state={j.state} /></td><td>{since(j.started_at, now)}</td>
                <td>{i < progressRows && j.spec.kind === "simulated" ? <Progress job={j} /> : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}
