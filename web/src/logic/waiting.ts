// Every pending job, for the queue view: GET /v1/queue lists only the jobs that could start now (the
// ready queue, each with a queue_position); GET /v1/jobs?state=PENDING lists every pending job, with
// pending_reason {code, message} and, when ready, queue_position. The waiting ones are the rest:
// held (by owner or admin), on dependencies, in retry backoff, held back by an array's %N limit.
//
// GET /v1/jobs folds an array into one row (array.counts, no pending_reason); its pending tasks
// with their reasons come from GET /v1/jobs?array=ID&state=PENDING, one row per task.
import { apiUrl, type ApiUrl } from "../api";
import { pendingSentence, waitingCodes } from "./pending";
import type { Job, JobList } from "./types";

// Groups follow waitingCodes' order; any other code comes after them, and a job with no reason yet last.

// One line of the Waiting section: a job, or the tasks of one folded array that wait for one reason.
export interface WaitingEntry {
  job: Job;        // the row from GET /v1/jobs (a folded array's row for its tasks)
  code: string;    // pending_reason.code; "" when the API gave none
  message: string; // pending_reason.message (the first task's, for an array)
  tasks: number;   // jobs this entry stands for: 1, or that many tasks of the array
  taskIds: number[];  // the array's task indices (ID_N) in this entry; empty for a plain job
}

export interface PendingSplit {
  ready: number;          // listed pending jobs (array tasks each) with a queue_position
  waiting: WaitingEntry[];
  waitingJobs: number;    // jobs and tasks the waiting entries stand for
}

// In the ready queue and able to start once cores are free: not a job that keeps its place there
// while it waits for nodes to return to service (nodes_unavailable), which needs someone to act.
export function readyToStart(job: Job): boolean {
  return job.queue_position !== undefined && job.queue_position !== null && job.pending_reason?.code !== "nodes_unavailable";
}

export function isFoldedArray(job: Job): boolean {
  return job.array !== undefined && job.array.task_id === undefined;
}

// The array a folded row stands for. The document does not promise its job_id: a row without one
// cannot have its tasks asked for, and keeps its pending tasks' reasons unknown.
function foldedArrayId(job: Job): number | undefined {
  return isFoldedArray(job) ? job.array?.job_id : undefined;
}

// The folded array rows whose pending tasks need their own request for their reasons.
export function arraysToExpand(rows: Job[]): number[] {
  return rows.filter((j) => (j.array?.counts?.PENDING ?? 0) > 0).flatMap((j) => foldedArrayId(j) ?? []);
}

// Splits listed pending rows into ready (counted) and waiting (entries). `arrayTasks`: a folded
// array's pending tasks by its id, as GET /v1/jobs?array=ID&state=PENDING lists them; an array
// without them (not loaded, or the request failed) counts its pending tasks as waiting for a
// reason not known here.
export function splitPending(rows: Job[], arrayTasks: Map<number, Job[]> = new Map()): PendingSplit {
  let ready = 0;
  const waiting: WaitingEntry[] = [];
  for (const row of rows) {
    if (!isFoldedArray(row)) {
      if (row.state !== "PENDING") continue;
      if (readyToStart(row)) {
        ready++;
        continue;
      }
      waiting.push({ job: row, code: row.pending_reason?.code ?? "", message: row.pending_reason?.message ?? "",
        tasks: 1, taskIds: [] });
      continue;
    }
    const pending = row.array?.counts?.PENDING ?? 0;
    if (pending === 0) continue;
    const arrayId = foldedArrayId(row);
    const tasks = arrayId === undefined ? undefined : arrayTasks.get(arrayId);
    if (!tasks) {
      waiting.push({ job: row, code: "", message: "", tasks: pending, taskIds: [] });
      continue;
    }
    const byCode = new Map<string, WaitingEntry>();
    for (const task of tasks) {
      if (task.state !== "PENDING") continue;
      if (readyToStart(task)) {
        ready++;
        continue;
      }
      const code = task.pending_reason?.code ?? "";
      let entry = byCode.get(code);
      if (!entry) {
        entry = { job: row, code, message: task.pending_reason?.message ?? "", tasks: 0, taskIds: [] };
        byCode.set(code, entry);
        waiting.push(entry);
      }
      entry.tasks++;
      if (task.array?.task_id !== undefined) entry.taskIds.push(task.array.task_id);
    }
    for (const entry of byCode.values()) entry.taskIds.sort((a, b) => a - b);
  }
  return { ready, waiting, waitingJobs: waiting.reduce((n, e) => n + e.tasks, 0) };
}

function codeRank(code: string): number {
  const at = waitingCodes.indexOf(code);
  if (at >= 0) return at;
  return code === "" ? waitingCodes.length + 1 : waitingCodes.length;
}

export interface WaitingGroup { code: string; title: string; entries: WaitingEntry[]; jobs: number }

const titles: Record<string, string> = {
  held: "Held",
  dependency: "Waiting on dependencies",
  backoff: "In retry backoff",
  array_limit: "Held back by an array limit",
  nodes_unavailable: "Waiting for nodes to return to service",
  "": "Reason not known yet",
};

// Waiting entries grouped by reason code (held, dependency, backoff, array limit, then any other
// code by name, then none), each group oldest submitted first.
export function groupWaiting(entries: WaitingEntry[]): WaitingGroup[] {
  const groups = new Map<string, WaitingGroup>();
  for (const e of entries) {
    let g = groups.get(e.code);
    if (!g) {
      g = { code: e.code, title: titles[e.code] ?? `Waiting: ${e.code.replace(/_/g, " ")}`, entries: [], jobs: 0 };
      groups.set(e.code, g);
    }
    g.entries.push(e);
    g.jobs += e.tasks;
  }
  const time = (e: WaitingEntry) => new Date(e.job.submitted_at).getTime() || 0;
  for (const g of groups.values()) {
    g.entries.sort((a, b) => time(a) - time(b) || a.job.id - b.job.id || (a.taskIds[0] ?? 0) - (b.taskIds[0] ?? 0));
  }
  return [...groups.values()].sort((a, b) => codeRank(a.code) - codeRank(b.code) || a.code.localeCompare(b.code));
}

// The overview's pending count from the share table, as the queue counts pending jobs: those the
// scheduler holds (pending_jobs) and those held by their owner or an admin (held_jobs).
export function pendingInCluster(shares: { pending_jobs?: number; held_jobs?: number }[]): string {
  const held = shares.reduce((n, s) => n + (s.held_jobs ?? 0), 0);
  const total = shares.reduce((n, s) => n + (s.pending_jobs ?? 0), 0) + held;
  return `${total.toLocaleString("en-US")} pending in the cluster${held ? ` (${held.toLocaleString("en-US")} held)` : ""}`;
}

// A reason's count in the header: "2 held", "2 on dependencies", "1 array limit".
export function reasonCount(code: string, n: number): string {
  switch (code) {
    case "held": return `${n} held`;
    case "dependency": return n === 1 ? "1 on a dependency" : `${n} on dependencies`;
    case "backoff": return `${n} in retry backoff`;
    case "array_limit": return n === 1 ? "1 array limit" : `${n} array limits`;
    case "nodes_unavailable": return `${n} for nodes to return`;
    case "": return `${n} with no reason yet`;
    default: return `${n} ${code.replace(/_/g, " ")}`;
  }
}

// The queue view's header line: "8 pending: 3 ready to start, 5 waiting (2 held, 2 on
// dependencies, 1 array limit)". `more`: pages of pending jobs were left unloaded, so the pending
// and waiting totals are lower bounds ("at least") and the breakdown covers the loaded ones.
export function pendingHeader(ready: number, groups: WaitingGroup[], more = false): string {
  const waiting = groups.reduce((n, g) => n + g.jobs, 0);
  const total = ready + waiting;
  if (total === 0 && !more) return "Nothing pending.";
  const n = (x: number) => x.toLocaleString("en-US");
  const atLeast = more ? "at least " : "";
  const head = `${more ? "At least " : ""}${n(total)} pending: ${n(ready)} ready to start, `;
  if (waiting === 0) return head + (more ? "at least 0 waiting" : "none waiting");
  const parts = groups.map((g) => reasonCount(g.code, g.jobs)).join(", ");
  return `${head}${atLeast}${n(waiting)} waiting (${more ? "of those loaded: " : ""}${parts})`;
}

// An entry's wait as a sentence: pendingSentence's, after the tasks it stands for when it is a
// folded array's ("3 tasks (12_4, 12_5, 12_6): Waiting outside the queue of share vision for 2 min: …").
export function waitingSentence(e: WaitingEntry, now: Date, listTasks = 5): string {
  const sentence = pendingSentence({ ...e.job, queue_position: undefined,
    pending_reason: e.code || e.message ? { code: e.code, message: e.message } : undefined }, now);
  if (!isFoldedArray(e.job)) return sentence;
  const id = e.job.array!.job_id;
  const shown = e.taskIds.slice(0, listTasks).map((t) => `${id}_${t}`);
  if (e.taskIds.length > listTasks) shown.push("…");
  return `${e.tasks === 1 ? "1 task" : `${e.tasks} tasks`}${shown.length ? ` (${shown.join(", ")})` : ""}: ${sentence}`;
}

// What the Waiting section loaded: GET /v1/jobs?state=PENDING page after page (its `next` cursor),
// up to `maxPages`, then each folded array's pending tasks.
export interface PendingLoad {
  rows: Job[];
  more: boolean;          // the listing had pages left when maxPages was reached
  next: string | null;
  arrayTasks: Map<number, Job[]>;
  error?: string;         // the first failed request's error (an array's: its rows count as reason unknown)
}

export const pendingPageSize = 500;
const maxArrays = 50;          // folded arrays expanded per load; the rest show their counts only
const maxArrayPages = 20;      // of 1,000 tasks each

type JobsUrl = ApiUrl<"/v1/jobs">;
type Fetch = (url: JobsUrl) => Promise<JobList>;

export function pendingUrl(limit: number, cursor: string | null): JobsUrl {
  return apiUrl("/v1/jobs", { query: { state: "PENDING", limit, cursor: cursor ?? undefined } });
}

// An array's pending tasks, unfolded with their reasons; bounded to its own ids (after=ID-1).
export function arrayTasksUrl(arrayId: number, cursor: string | null): JobsUrl {
  return apiUrl("/v1/jobs", { query: { array: arrayId, state: "PENDING", after: arrayId - 1, limit: 1000, cursor: cursor ?? undefined } });
}

// The jobs of up to `maxPages` pages of a GET /v1/jobs listing, following its `next` cursor, and
// the cursor it stopped at (null: the listing's end).
async function followPages(get: Fetch, url: (cursor: string | null) => JobsUrl,
                           maxPages: number): Promise<{ jobs: Job[]; next: string | null }> {
  const jobs: Job[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await get(url(cursor));
    jobs.push(...page.jobs);
    cursor = page.next;
    pages++;
  } while (cursor && pages < maxPages);
  return { jobs, next: cursor };
}

export async function loadPending(get: Fetch, maxPages: number, pageSize = pendingPageSize,
                                  explain: (e: unknown) => string = String): Promise<PendingLoad> {
  const { jobs: rows, next } = await followPages(get, (cursor) => pendingUrl(pageSize, cursor), maxPages);
  // A page ends below its last array, which it showed whole; an array is never split across pages,
  // but the same id is kept once in case it is.
  const seen = new Set<string>();
  const unique = rows.filter((j) => {
    const arrayId = foldedArrayId(j);
    const key = arrayId === undefined ? `j${j.id}` : `a${arrayId}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const arrayTasks = new Map<number, Job[]>();
  let error: string | undefined;
  for (const id of arraysToExpand(unique).slice(0, maxArrays)) {
    try {
      arrayTasks.set(id, (await followPages(get, (cursor) => arrayTasksUrl(id, cursor), maxArrayPages)).jobs);
    } catch (e) {
      error ??= explain(e);
    }
  }
  return { rows: unique, more: next !== null, next, arrayTasks, error };
}
