import { useEffect, useRef, useState } from "preact/hooks";
import { apiUrl, explain, get } from "../api";
import { useApi, useApp } from "../app-state";
import { ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { VirtualList } from "../components/virtual-list";
import { count, jobLabel, jobPath, progress, since, taskCounts } from "../logic/format";
import { pagesFor, rowOf } from "../logic/paging";
import { pendingSentence } from "../logic/pending";
import { visibleJobs } from "../logic/roles";
import type { Job } from "../logic/types";
import {
  groupWaiting, isFoldedArray, loadPending, pendingHeader, readyToStart, splitPending, waitingSentence,
  type PendingLoad, type WaitingEntry, type WaitingGroup,
} from "../logic/waiting";

// Progress is fetched for the first rows only: one small request each (a single bucket).
const progressRows = 50;

function Progress({ job }: { job: Job }) {
  const metrics = useApi(apiUrl("/v1/jobs/{id}/metrics", { path: { id: String(job.id) }, query: { max_points: 1 } }));
  const points = metrics.data?.points ?? [];
  const last = points[points.length - 1];
  if (!last) return <span>—</span>;
  const workload = job.spec.workload;
  return <span>{progress(last.step, workload?.steps, last.samples_per_s, workload?.global_batch)}</span>;
}

// The ready queue in the scheduler's order from GET /v1/queue, a page of 200 at a time for the rows
// in view, reloaded on every refresh (positions move as jobs start). A job that waits for nodes to
// return keeps its place here, marked, and is counted under Waiting.
const pageSize = 200;

function PendingQueue({ onTotal }: { onTotal: (total: number | undefined) => void }) {
  const { refresh } = useApp();
  const [range, setRange] = useState<[number, number]>([0, 30]);
  const [loaded, setLoaded] = useState<{ pages: Map<number, Job[]>; total?: number; error?: string }>({ pages: new Map() });
  // At least the page of the first row in view, which also tells the total while the list is empty.
  const wanted = pagesFor(range[0], Math.max(range[0], range[1]), pageSize);
  useEffect(() => {
    let current = true;
    Promise.all(wanted.map((p) => get(apiUrl("/v1/queue", { query: { offset: p * pageSize, limit: pageSize } })).then((r) => [p, r] as const)))
      .then((results) => current && setLoaded({
        pages: new Map(results.map(([p, r]) => [p, r.jobs])),
        total: results.length ? results[0][1].total : 0,
      }), (e) => current && setLoaded((l) => ({ ...l, error: explain(e) })));
    return () => {
      current = false;
    };
  }, [refresh, wanted.join(",")]);
  useEffect(() => onTotal(loaded.total), [loaded.total]);
  const now = new Date();
  const total = loaded.total ?? 0;
  return (
    <Section title={`In the queue (${loaded.total === undefined ? "…" : count(total, "job")}, in the scheduler's order)`}>
      <ErrorNote error={loaded.error} />
      {loaded.total === 0 ? <p>No job is in the queue.</p> : (
        <VirtualList items={Array.from({ length: total }, (_, i) => i)} rowHeight={44} height={480} label="Pending jobs"
                     onRange={(first, last) => setRange([first, last])} row={(i) => {
          const j = rowOf(loaded.pages, i, pageSize);
          if (!j) return <div class="queue-row"><span class="pos">{i + 1}</span><span class="muted">loading…</span></div>;
          return (
            <div class={readyToStart(j) ? "queue-row" : "queue-row blocked"} data-job={j.id} data-reason={j.pending_reason?.code}>
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

// Every pending job from GET /v1/jobs?state=PENDING (pages of 500, up to `maxPages`) with each
// folded array's pending tasks, reloaded on refresh; a refresh while a load runs loads once more
// after it rather than starting a second one.
function usePendingLoad(maxPages: number): { load?: PendingLoad; error?: string } {
  const { refresh } = useApp();
  const [state, setState] = useState<{ load?: PendingLoad; error?: string }>({});
  const busy = useRef(false);
  const again = useRef(false);
  const mounted = useRef(true);
  const pages = useRef(maxPages);
  pages.current = maxPages;
  useEffect(() => () => {
    mounted.current = false;
  }, []);
  useEffect(() => {
    const run = () => {
      if (busy.current) {
        again.current = true;
        return;
      }
      busy.current = true;
      loadPending(get, pages.current, undefined, explain)
        .then((load) => mounted.current && setState({ load, error: load.error }),
              (e) => mounted.current && setState((s) => ({ ...s, error: explain(e) })))
        .finally(() => {
          busy.current = false;
          if (again.current && mounted.current) {
            again.current = false;
            run();
          }
        });
    };
    run();
  }, [refresh, maxPages]);
  return state;
}

// Rows shown per reason; the header counts every loaded one.
const rowsPerGroup = 200;

function WaitingRow({ entry, now }: { entry: WaitingEntry; now: Date }) {
  const j = entry.job;
  const folded = isFoldedArray(j);
  // One task of an array links to that task (ID_N); several to the array's page.
  const href = folded && entry.taskIds.length === 1 ? `/jobs/${j.array!.job_id}_${entry.taskIds[0]}` : jobPath(j);
  const label = folded && entry.taskIds.length === 1 ? `${j.array!.job_id}_${entry.taskIds[0]}` : jobLabel(j);
  return (
    <tr data-job={j.id} data-reason={entry.code}>
      <td>
        <a href={href}>#{label}</a>
        {folded && j.array?.counts && <div class="muted" data-task-counts>{taskCounts(j.array.counts)}</div>}
      </td>
      <td class="name">{j.name}</td><td>{j.user}</td><td>{j.share}</td>
      <td class="reason">{waitingSentence(entry, now)}</td>
      <td><Time at={j.submitted_at} /></td>
    </tr>
  );
}

function WaitingGroupTable({ group, now }: { group: WaitingGroup; now: Date }) {
  const shown = group.entries.slice(0, rowsPerGroup);
  return (
    <section aria-label={group.title} data-reason-group={group.code}>
      <h3>{group.title} ({count(group.jobs, "job")})</h3>
      <div class="table-scroll">
        <table class="dense">
          <thead>
            <tr>
              <th scope="col">Job</th><th scope="col">Name</th><th scope="col">User</th><th scope="col">Share</th>
              <th scope="col">Why it waits</th><th scope="col">Submitted</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => <WaitingRow key={`${e.job.id}:${e.code}`} entry={e} now={now} />)}
          </tbody>
        </table>
      </div>
      {group.entries.length > shown.length && (
        <p class="hint">and {count(group.entries.length - shown.length, "more row")} not shown</p>
      )}
    </section>
  );
}

export function Queue() {
  const { who } = useApp();
  const running = useApi(apiUrl("/v1/jobs", { query: { state: "RUNNING", limit: 1000 } }));
  const [maxPages, setMaxPages] = useState(4);
  const pending = usePendingLoad(maxPages);
  const [queueTotal, setQueueTotal] = useState<number | undefined>(undefined);
  const now = new Date();
  const active = visibleJobs(who, running.data?.jobs ?? []);
  const load = pending.load;
  const rows = visibleJobs(who, load?.rows ?? []);
  const split = splitPending(rows, load?.arrayTasks);
  const groups = groupWaiting(split.waiting);
  // With every page loaded the listing counts the ready jobs too (one snapshot); with pages left,
  // GET /v1/queue's total is the exact ready count.
  const more = load?.more ?? false;
  const ready = more ? Math.max(split.ready, queueTotal ?? 0) : split.ready;
  return (
    <>
      <h1>Queue</h1>
      <p class="hint" role="status" data-pending-summary>{load ? pendingHeader(ready, groups, more) : "Loading pending jobs…"}</p>
      <ErrorNote error={running.error} />
      <PendingQueue onTotal={setQueueTotal} />
      <Section title={`Waiting (${load ? `${more ? "at least " : ""}${count(split.waitingJobs, "job")}` : "…"}, by reason)`}>
        <ErrorNote error={pending.error} />
        {load && split.waiting.length === 0 && <p>No job waits on a hold, a dependency, a backoff, an array limit or nodes.</p>}
        {groups.map((g) => <WaitingGroupTable key={g.code} group={g} now={now} />)}
        {more && (
          <p>
            Only the newest {count(rows.length, "pending row")} are loaded.{" "}
            <button type="button" onClick={() => setMaxPages((n) => n * 2)}>Load more</button>
          </p>
        )}
      </Section>
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
