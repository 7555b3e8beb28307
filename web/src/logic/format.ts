// How the dashboard writes times, durations and quantities: times in the viewer's zone, compact and
// 24-hour (UTC on hover, via title=), every number with its unit.
import type { Attempt, Job, JobSpec, Straggler } from "./types";

// Compact and sortable, 24-hour, in the viewer's zone (or `timeZone`): "2026-11-28 23:41:07". The
// zone is named once on the page (timeZoneLabel, in the footer) rather than on every time.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string | undefined): Intl.DateTimeFormat {
  const key = timeZone ?? "";
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone, year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
    });
    formatters.set(key, f);
  }
  return f;
}

function parts(at: Date, timeZone?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(at)) out[p.type] = p.value;
  if (out.hour === "24") out.hour = "00";  // engines that still write midnight as 24
  return out;
}

export function localTime(iso: string | undefined, timeZone?: string): string {
  if (!iso) return "—";
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const p = parts(at, timeZone);
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`;
}

// The zone local times are written in, with its offset from UTC at `at`: "Europe/Berlin (UTC+01:00)".
export function timeZoneLabel(at: Date = new Date(), timeZone?: string): string {
  const zone = timeZone ?? formatter(undefined).resolvedOptions().timeZone ?? "local time";
  const p = parts(at, timeZone);
  const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
  const minutes = Math.round((wall - Math.floor(at.getTime() / 1000) * 1000) / 60000);
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  const offset = `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
  return zone === "UTC" || zone === "Etc/UTC" ? "UTC" : `${zone} (${offset})`;
}

export function utcTitle(iso: string | undefined): string {
  if (!iso) return "";
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : at.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export function since(iso: string | undefined, now: Date): string {
  if (!iso) return "—";
  return duration((now.getTime() - new Date(iso).getTime()) / 1000);
}

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

export function count(n: number, unit: string, plural = unit + "s"): string {
  return `${grouped.format(n)} ${n === 1 ? unit : plural}`;
}

export function cores(n: number): string {
  return count(n, "core");
}

// A job's shape: "2 nodes × 4 cores", or "2 whole nodes" when it asked for no core count.
export function shape(spec: Pick<JobSpec, "nodes" | "cores_per_node">): string {
  const nodes = spec.nodes ?? 1;
  if (spec.cores_per_node === undefined || spec.cores_per_node === null) return nodes === 1 ? "1 whole node" : `${grouped.format(nodes)} whole nodes`;
  return `${count(nodes, "node")} × ${cores(spec.cores_per_node)}`;
}

// Core-time in core-hours, or core-seconds while it is under a tenth of a core-hour.
export function coreHours(coreSeconds: number): string {
  if (coreSeconds < 360) return `${grouped.format(coreSeconds)} core-s`;
  return `${grouped.format(coreSeconds / 3600)} core-h`;
}

export function percent(ratio: number | null | undefined): string {
  if (ratio === null || ratio === undefined || !Number.isFinite(ratio)) return "—";
  return `${(ratio * 100).toFixed(1)} %`;
}

export function rate(perSecond: number | null | undefined, unit: string): string {
  if (perSecond === null || perSecond === undefined || !Number.isFinite(perSecond)) return "—";
  return `${grouped.format(perSecond)} ${unit}/s`;
}

// Bytes per second (nccl-tests' busbw and algbw), in decimal units as nccl-tests prints them.
export function bandwidth(bytesPerSecond: number | null | undefined): string {
  if (bytesPerSecond === null || bytesPerSecond === undefined || !Number.isFinite(bytesPerSecond)) return "—";
  if (bytesPerSecond >= 1e9) return `${grouped.format(bytesPerSecond / 1e9)} GB/s`;
  if (bytesPerSecond >= 1e6) return `${grouped.format(bytesPerSecond / 1e6)} MB/s`;
  return `${grouped.format(bytesPerSecond / 1e3)} kB/s`;
}

export function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${["th", "st", "nd", "rd"][n % 10] ?? "th"}`;
}

// A running simulated job's progress line: step of steps, throughput and the time left at it.
export function progress(step: number, steps: number | undefined, samplesPerS: number | null, globalBatch: number | undefined): string {
  if (!steps) return `step ${grouped.format(step)}`;
  const parts = [`step ${grouped.format(step)} of ${grouped.format(steps)} (${Math.floor((step / steps) * 100)} %)`];
  if (samplesPerS) parts.push(rate(samplesPerS, "samples"));
  if (samplesPerS && globalBatch) parts.push(`about ${duration(((steps - step) * globalBatch) / samplesPerS)} left`);
  return parts.join(" · ");
}

// A job as the CLI names it: "12", a task "12_3", an array folded into one row "12_[0-9]" (its spec).
// The document does not promise an array's job_id; without it the job goes by its own id.
export function jobLabel(job: Pick<Job, "id" | "array"> & { spec?: Pick<JobSpec, "array"> }): string {
  if (job.array?.job_id === undefined) return String(job.id);
  if (job.array.task_id !== undefined) return `${job.array.job_id}_${job.array.task_id}`;
  const spec = job.spec?.array?.replace(/%.*$/, "") ?? "";
  return `${job.array.job_id}_[${spec}]`;
}

// Where a job's page is: a task's by its ID_N (its internal id would read as the array for task 0).
export function jobPath(job: Pick<Job, "id" | "array">): string {
  const { job_id, task_id } = job.array ?? {};
  return `/jobs/${job_id !== undefined && task_id !== undefined ? `${job_id}_${task_id}` : job.id}`;
}

// A folded array's tasks by state, busiest first: "2 RUNNING, 1 PENDING, 7 SUCCEEDED".
export function taskCounts(counts: Record<string, number> | undefined): string {
  if (!counts) return "";
  const order = ["RUNNING", "STARTING", "PENDING", "FAILED", "CANCELLED", "SUCCEEDED"];
  const rank = (state: string) => {
    const at = order.indexOf(state);
    return at < 0 ? order.length : at;
  };
  return Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([state, n]) => `${n} ${state}`)
    .join(", ");
}

// "rank 1 on trn-3 took 2.9x the other ranks' median time per step".
export function stragglerSentence(s: Pick<Straggler, "rank" | "node" | "ratio">): string {
  return `rank ${s.rank} on ${s.node} took ${s.ratio.toFixed(1)}x the other ranks' median time per step`;
}

// What the Training section says when there are no metrics to chart: a job that reported steps
// without metrics is told how to send them, rather than that it reported nothing. Its steps are
// the progress file's (steps_completed) as much as the metrics' (last_step).
export function noMetricsSentence(attempts: Pick<Attempt, "last_step" | "steps_completed">[]): string {
  const steps = Math.max(0, ...attempts.map((a) => Math.max(a.last_step ?? 0, a.steps_completed ?? 0)));
  if (steps === 0) return "No steps reported yet.";
  return `${count(steps, "step")} reported, without metrics: report loss, learning rate and throughput with ` +
    "trainyard.report(step, loss=..., lr=...) to chart them.";
}

// "3 checkpoint writes failed, the last with: ...: Permission denied".
export function checkpointFailureSentence(f: NonNullable<Attempt["checkpoint_failures"]>): string {
  return `${count(f.count, "checkpoint write")} failed, the last with: ${f.last_error}`;
}

// A failed attempt's quoted output as the job page shows it: "Last output of attempt 2 (rank 1 on
// trn-3)" over its lines (the rank's node is nodes[rank]); undefined when it has none. The text is
// the job's own output: shown as text, never as markup.

export function attemptOutput(a: Pick<Attempt, "number" | "nodes" | "output" | "output_rank">):
  { title: string; text: string } | undefined {
  const text = (a.output ?? "").replace(/\r?\n+$/, "");
  if (text.trim() === "") return undefined;
  const rank = a.output_rank;
  const node = rank !== undefined ? a.nodes[rank] : undefined;
  const where = rank === undefined ? "" : node ? ` (rank ${rank} on ${node})` : ` (rank ${rank})`;
  return { title: `Last output of attempt ${a.number}${where}`, text };
}
