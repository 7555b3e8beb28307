import { useApi, useApp } from "../app-state";
import { ErrorNote, Section, StateBadge } from "../components/ui";
import { VirtualList } from "../components/virtual-list";
import { count, progress, since } from "../logic/format";
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

export function Queue() {
  const { who } = useApp();
  const pending = useApi<JobList>("/v1/jobs?state=PENDING&limit=1000");
  const running = useApi<JobList>("/v1/jobs?state=RUNNING&limit=1000");
  const now = new Date();
  const queue = visibleJobs(who, pending.data?.jobs ?? [])
    .sort((a, b) => (a.queue_position ?? 1e9) - (b.queue_position ?? 1e9));
  const active = visibleJobs(who, running.data?.jobs ?? []);
  return (
    <>
      <h1>Queue</h1>
      <ErrorNote error={pending.error ?? running.error} />
      <Section title={`Pending (${count(queue.length, "job")}, in the scheduler's order)`}>
        {pending.data?.next && <p class="hint">Showing the newest 1,000 pending jobs, in queue order; more are waiting.</p>}
        {queue.length === 0 ? <p>Nothing waits.</p> : (
          <VirtualList items={queue} rowHeight={44} height={480} label="Pending jobs" row={(j) => (
            <div class="queue-row" data-job={j.id}>
              <span class="pos">{j.queue_position ?? "—"}</span>
              <a href={`/jobs/${j.id}`}>#{j.id} {j.name}</a>
              <span class="muted">{j.user} · {j.share}</span>
              <span class="reason">{pendingSentence(j, now)}</span>
            </div>
          )} />
        )}
      </Section>
      <Section title={`Running (${count(active.length, "job")})`}>
        <table>
          <thead><tr><th>Job</th><th>User</th><th>Share</th><th>State</th><th>Running for</th><th>Progress</th></tr></thead>
          <tbody>
            {active.map((j, i) => (
              <tr key={j.id} data-job={j.id}>
                <td><a href={`/jobs/${j.id}`}>#{j.id} {j.name}</a></td><td>{j.user}</td><td>{j.share}</td>
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
