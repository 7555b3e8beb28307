import { useMemo, useState } from "preact/hooks";
import { apiUrl, send } from "../api";
import { type Loaded, useApi, useApp } from "../app-state";
import { Chart } from "../components/chart";
import { ConfirmButton, ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { attemptBoundaries, metricSeries, type MetricName } from "../logic/downsample";
import { attemptOutput, checkpointFailureSentence, noMetricsSentence, stragglerSentence, coreHours, count, jobLabel, jobPath, percent, shape, taskCounts } from "../logic/format";
import { pendingSentence } from "../logic/pending";
import { isEnded, mayCancel } from "../logic/roles";
import type { Attempt, Job } from "../logic/types";
import { ProvenanceSection } from "./provenance";

const charts: { name: MetricName; title: string; unit: string }[] = [
  { name: "loss", title: "Loss", unit: "loss" },
  { name: "grad_norm", title: "Gradient norm", unit: "‖g‖" },
  { name: "lr", title: "Learning rate", unit: "lr" },
  { name: "samples_per_s", title: "Throughput", unit: "samples/s" },
];

// An array read by its own id: the whole array, every task with its state and its own actions, and
// actions on all tasks that say so. A task's own page is its ID_N's.
function ArrayPage({ id, job, reload }: { id: string; job: Job; reload: () => void }) {
  const { who } = useApp();
  const tasks = useApi(apiUrl("/v1/jobs", { query: { array: Number(id), limit: 1000 } }));
  const all = job.array?.task_count ?? 0;
  const rows = [...(tasks.data?.jobs ?? [])].sort((a, b) => (a.array?.task_id ?? 0) - (b.array?.task_id ?? 0));
  const active = rows.filter((t) => !isEnded(t.state)).length;
  const reloadAll = () => { reload(); tasks.reload(); };
  return (
    <>
      <h1>Array #{jobLabel({ ...job, array: job.array && { job_id: job.array.job_id } })} {job.name}</h1>
      <dl class="facts">
        <dt>State</dt><dd><StateBadge state={job.array_tasks!.state} /> <span data-task-counts>{taskCounts(job.array_tasks!.counts)}</span></dd>
        <dt>Tasks</dt><dd>{count(all, "task")}{job.spec.array ? <> ({String(job.spec.array)})</> : null}</dd>
        <dt>User, share</dt><dd>{job.user}, {job.share}</dd>
        <dt>Submitted</dt><dd><Time at={job.submitted_at} /></dd>
        <dt>Shape of each task</dt><dd>{shape(job.spec)}</dd>
      </dl>
      {mayCancel(who, job) && active > 0 && (
        <div class="actions">
          <ConfirmButton label={`Cancel all ${all} tasks`} danger
                         question={`Cancel array #${id}: all ${all} tasks (${active} not ended)? Running attempts are stopped.`}
                         onConfirm={() => send("post", apiUrl("/v1/jobs/{id}/cancel", { path: { id } })).then(reloadAll)} />
        </div>
      )}
      <Section title="Tasks">
        <ErrorNote error={tasks.error} />
        <table>
          <thead><tr><th>Task</th><th>State</th><th>Reason</th><th>Started, ended</th><th></th></tr></thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.id} data-task={t.array?.task_id}>
                <td><a href={jobPath(t)}>#{jobLabel(t)}</a></td>
                <td><StateBadge state={t.state} /></td>
                <td>{t.reason}</td>
                <td><Time at={t.started_at} />, <Time at={t.ended_at} /></td>
                <td>{mayCancel(who, t) && !isEnded(t.state) && (
                  <ConfirmButton label="Cancel task" danger question={`Cancel task #${jobLabel(t)} only? Its running attempt is stopped.`}
                                 onConfirm={() => send("post", apiUrl("/v1/jobs/{id}/cancel", { path: { id: jobLabel(t) } })).then(reloadAll)} />
                )}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Spec"><pre>{JSON.stringify(job.spec, null, 2)}</pre></Section>
    </>
  );
}

// A failed attempt's first failed rank's last lines: the job's own text, so rendered as text only.
function AttemptOutput({ a }: { a: Attempt }) {
  const out = attemptOutput(a);
  if (!out) return null;
  return (
    <figure class="attempt-output" data-attempt-output={a.number}>
      <figcaption>{out.title}</figcaption>
      <pre tabIndex={0}>{out.text}</pre>
    </figure>
  );
}

export function JobPage({ id }: { id: string }) {
  const job = useApi(apiUrl("/v1/jobs/{id}", { path: { id } }));
  if (job.data?.array_tasks) return <ArrayPage id={id} job={job.data} reload={job.reload} />;
  return <OneJobPage id={id} job={job} />;
}

function OneJobPage({ id, job }: { id: string; job: Loaded<Job> }) {
  const { who } = useApp();
  const attempts = useApi(apiUrl("/v1/jobs/{id}/attempts", { path: { id } }));
  const metrics = useApi(apiUrl("/v1/jobs/{id}/metrics", { path: { id }, query: { max_points: 500 } }));
  const checkpoints = useApi(apiUrl("/v1/jobs/{id}/checkpoints", { path: { id } }));
  const [rank, setRank] = useState<string>("0");
  const j = job.data;
  // An ended job's logs no longer change: shown once, not followed.
  const ended = j !== undefined && isEnded(j.state);
  const [follow, setFollow] = useState(true);
  const [lossLog, setLossLog] = useState(false);
  const following = follow && !ended;
  const logsUrl = apiUrl("/v1/jobs/{id}/logs", { path: { id }, query: { tail: 200, rank: rank === "all" ? undefined : Number(rank) } });
  const logs = useApi(j ? logsUrl : null, following);
  const points = metrics.data?.points ?? [];
  const marks = useMemo(() => [
    ...attemptBoundaries(points).map((step) => ({ step, kind: "attempt" as const })),
    ...(metrics.data?.spikes ?? []).map((s) => ({ step: s.started_at_step, kind: "spike" as const })),
  ], [metrics.data]);
  return (
    <>
      <h1>Job #{j ? jobLabel(j) : id}{j ? ` ${j.name}` : ""}</h1>
      <ErrorNote error={job.error} />
      {j && (
        <>
          <dl class="facts">
            <dt>State</dt><dd><StateBadge state={j.state} /> {j.reason}</dd>
            {j.failure_class && <><dt>Failure class</dt><dd>{j.failure_class}</dd></>}
            {j.suggestion && <><dt>Suggestion</dt><dd>{j.suggestion}</dd></>}
            {j.state === "PENDING" && <><dt>Waiting</dt><dd>{pendingSentence(j, new Date())}</dd></>}
            <dt>User, share</dt><dd>{j.user}, {j.share}</dd>
            <dt>Submitted</dt><dd><Time at={j.submitted_at} /></dd>
            <dt>Started, ended</dt><dd><Time at={j.started_at} />, <Time at={j.ended_at} /></dd>
            <dt>Shape</dt><dd>{shape(j.spec)}</dd>
          </dl>
          {mayCancel(who, j) && (
            <div class="actions">
              <ConfirmButton label={j.array ? "Cancel task" : "Cancel job"} danger
                             question={`Cancel ${j.array ? "task" : "job"} #${jobLabel(j)}${j.array ? " only" : ""}? Its running attempt is stopped.`}
                             onConfirm={() => send("post", apiUrl("/v1/jobs/{id}/cancel", { path: { id: jobLabel(j) } })).then(() => job.reload())} />
            </div>
          )}
        </>
      )}
      <Section title="Training">
        <ErrorNote error={metrics.error} />
        {points.length === 0 ? <p>{noMetricsSentence(attempts.data?.attempts ?? [])}</p> : (
          <div class="charts">
            {charts.map((c) => (
              <Chart key={c.name} title={c.title} unit={c.unit} series={metricSeries(points, c.name, 500)} marks={marks}
                     {...(c.name === "loss" ? { log: lossLog, onLog: setLossLog } : {})} />
            ))}
            <p class="hint">Dashed lines: a new attempt resumed there (long dashes) or a gradient-norm spike began (short).
              {" "}{count(metrics.data?.steps ?? 0, "step")}, {count(metrics.data?.bucket_steps ?? 1, "step")} per point.</p>
          </div>
        )}
      </Section>
      <Section title="Attempts">
        <ol class="timeline">
          {(attempts.data?.attempts ?? []).map((a) => (
            <li key={a.id} data-attempt={a.number}>
              <strong>Attempt {a.number}</strong> on {a.nodes.join(", ") || "no nodes yet"}
              {" — "}<Time at={a.started_at} /> to <Time at={a.ended_at} />
              {a.failure_class && <> · <span class="badge state-failed">{a.failure_class}</span> {a.infrastructure ? "(infrastructure: not the job's fault)" : "(the job's own)"}</>}
              {a.reason && <div class="muted">{a.reason}</div>}
              {a.resumed_from && <div>resumed from <code>{a.resumed_from}</code></div>}
              {a.diagnosis && <details><summary>diagnosis</summary><pre>{a.diagnosis}</pre></details>}
              {a.stragglers?.map((s) => (
                <div class="straggler"><span class="badge state-suspect">straggler</span> {stragglerSentence(s)} <Time at={s.found_at} /></div>
              ))}
              {a.checkpoint_failures && (
                <div class="checkpoint-failed"><span class="badge state-suspect">checkpoint failed</span> {checkpointFailureSentence(a.checkpoint_failures)}</div>
              )}
              {a.steps_completed !== undefined && <div>{count(a.steps_completed, "step")} completed</div>}
              <AttemptOutput a={a} />
            </li>
          ))}
        </ol>
      </Section>
      {j && <ProvenanceSection job={j.id} attempts={attempts.data?.attempts ?? []} />}
      {j?.store_unreadable && <p class="error">{j.store_unreadable}</p>}
      {j?.goodput && (
        <Section title="Goodput">
          {j.goodput.goodput === null
            ? <p>{j.goodput.goodput_note ?? "n/a"}</p>
            : <p><strong>{percent(j.goodput.goodput)}</strong> of {coreHours(j.goodput.allocated_core_s)} produced kept steps.</p>}
          <ul class="plain">
            {Object.entries(j.goodput.lost_core_s).filter(([, v]) => v > 0).map(([cause, v]) => (
              <li key={cause}>lost to {cause}: {coreHours(v)}</li>
            ))}
          </ul>
        </Section>
      )}
      <Section title="Checkpoints">
        <p class="hint" data-checkpoints-hint>
          A checkpoint is valid to resume from once it is recorded: an attempt of this job reported it
          complete (rank 0 announced it, or the agent saw its step directory finished) while that attempt
          was current. One still being written, or left by an attempt that was replaced, is not.
        </p>
        <table>
          <thead><tr><th>Step</th><th>Valid</th><th>Path</th></tr></thead>
          <tbody>
            {(checkpoints.data?.checkpoints ?? []).map((c) => (
              <tr key={c.step}><td>{c.step}</td><td>{c.valid ? "yes" : `no: ${c.problem}`}</td><td><code>{c.path}</code></td></tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Logs">
        <div class="toolbar">
          <label>Rank <select value={rank} onChange={(e) => setRank((e.target as HTMLSelectElement).value)}>
            <option value="all">all</option>
            {Array.from({ length: j?.spec.nodes ?? 1 }, (_, r) => <option key={r} value={String(r)}>{r}</option>)}
          </select></label>
          <label>
            <input type="checkbox" checked={following} disabled={ended} aria-describedby={ended ? "follow-off" : undefined}
                   onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
          </label>
          {ended && <span id="follow-off" class="hint">The job has ended: its logs are complete, not followed.</span>}
        </div>
        <ErrorNote error={logs.error} />
        {(logs.data?.logs ?? []).map((l) => (
          <div key={l.rank}>
            <h3>Rank {l.rank} on {l.node}{l.truncated ? " (tail)" : ""}</h3>
            {l.error ? <p class="error">{l.error}</p> : <pre class="log" tabIndex={0}>{l.text}</pre>}
          </div>
        ))}
      </Section>
      <Section title="Spec"><pre>{JSON.stringify(j?.spec ?? {}, null, 2)}</pre></Section>
    </>
  );
}
