import { useMemo, useState } from "preact/hooks";
import { api } from "../api";
import { useApi, useApp } from "../app-state";
import { Chart } from "../components/chart";
import { ConfirmButton, ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { attemptBoundaries, metricSeries, type MetricName } from "../logic/downsample";
import { coreHours, count, percent, shape } from "../logic/format";
import { pendingSentence } from "../logic/pending";
import { isEnded, mayCancel } from "../logic/roles";
import type { Attempt, Job, JobMetrics } from "../logic/types";
import { ProvenanceSection } from "./provenance";

const charts: { name: MetricName; title: string; unit: string }[] = [
  { name: "loss", title: "Loss", unit: "loss" },
  { name: "grad_norm", title: "Gradient norm", unit: "‖g‖" },
  { name: "lr", title: "Learning rate", unit: "lr" },
  { name: "samples_per_s", title: "Throughput", unit: "samples/s" },
];

interface Logs { attempt: number; logs: { rank: number; node: string; text?: string; error?: string; truncated?: boolean }[] }
interface Checkpoints { checkpoints: { step: number; path: string; valid: boolean; problem: string; recorded_by_attempt: number | null }[] }

export function JobPage({ id }: { id: number }) {
  const { who } = useApp();
  const job = useApi<Job>(`/v1/jobs/${id}`);
  const attempts = useApi<{ attempts: Attempt[] }>(`/v1/jobs/${id}/attempts`);
  const metrics = useApi<JobMetrics>(`/v1/jobs/${id}/metrics?max_points=500`);
  const checkpoints = useApi<Checkpoints>(`/v1/jobs/${id}/checkpoints`);
  const [rank, setRank] = useState<string>("0");
  const j = job.data;
  // An ended job's logs no longer change: shown once, not followed.
  const ended = j !== undefined && isEnded(j.state);
  const [follow, setFollow] = useState(true);
  const following = follow && !ended;
  const logs = useApi<Logs>(j ? `/v1/jobs/${id}/logs?tail=200${rank === "all" ? "" : `&rank=${rank}`}` : null, following);
  const points = metrics.data?.points ?? [];
  const marks = useMemo(() => [
    ...attemptBoundaries(points).map((step) => ({ step, kind: "attempt" as const })),
    ...(metrics.data?.spikes ?? []).map((s) => ({ step: s.started_at_step, kind: "spike" as const })),
  ], [metrics.data]);
  return (
    <>
      <h1>Job #{id}{j ? ` ${j.name}` : ""}</h1>
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
              <ConfirmButton label="Cancel job" danger question={`Cancel job #${id}? Its running attempt is stopped.`}
                             onConfirm={() => api(`/v1/jobs/${id}/cancel`, { method: "POST" }).then(() => job.reload())} />
            </div>
          )}
        </>
      )}
      <Section title="Training">
        <ErrorNote error={metrics.error} />
        {points.length === 0 ? <p>No steps reported yet.</p> : (
          <div class="charts">
            {charts.map((c) => (
              <Chart key={c.name} title={c.title} unit={c.unit} series={metricSeries(points, c.name, 500)} marks={marks} />
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
              {a.steps_completed !== undefined && <div>{count(a.steps_completed, "step")} completed</div>}
            </li>
          ))}
        </ol>
      </Section>
      <ProvenanceSection job={id} attempts={attempts.data?.attempts ?? []} />
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
          <label title={ended ? "The job has ended: its logs no longer change" : undefined}>
            <input type="checkbox" checked={following} disabled={ended}
                   onChange={(e) => setFollow((e.target as HTMLInputElement).checked)} /> Follow
          </label>
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
