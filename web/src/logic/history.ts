// The cluster over time (GET /v1/cluster/history) as uPlot's aligned data, one chart each for cores,
// queue depth, attempts and goodput. x is Unix seconds at each bucket's start. A missing bucket
// becomes one null point where it would have started, so the line breaks there instead of drawing
// across the time the daemon was down (uPlot's spanGaps stays off).
import { count, localTime } from "./format";
import type { ClusterHistory, HistoryBucket } from "./types";

// The windows the overview offers: the query the daemon takes, and how the page writes it.
// The last hour is there for what just happened (30 s buckets); the day is shown first.
export const historyWindows = [{ query: "1h", label: "1 h" }, { query: "24h", label: "24 h" }, { query: "7d", label: "7 d" }] as const;
export const defaultHistoryWindow = "24h";

// The window to open on: the default, unless its samples cover under a sixth of it (a young
// cluster's hour is one dot in 24 h) and a shorter window holds them all.
export function openingWindow(h: Pick<ClusterHistory, "window_s" | "buckets">, now: Date): string {
  const first = h.buckets[0];
  if (!first) return defaultHistoryWindow;
  const covered = (now.getTime() - new Date(first.at).getTime()) / 1000;
  if (covered >= h.window_s / 6) return defaultHistoryWindow;
  return covered <= 3600 ? "1h" : defaultHistoryWindow;
}

export interface TimeSeries {
  label: string;
  colour: string;  // a CSS variable (style.css), so the dark theme has its own
  dash?: number[];
  values: (number | null)[];
}

export interface TimeChartData {
  title: string;
  axis: string;                  // the y axis's label
  format: (v: number) => string;  // a value as the legend writes it, with its unit
  yMax?: number;                 // a fixed top (goodput's 100 %); else a little over the highest value
  range: [number, number];       // the whole window, so a gap at either end shows as one
  x: number[];
  series: TimeSeries[];
  points: number;                // buckets with a value: 0 shows `empty` instead of axes
  window: string;                // "24 h"
  empty: string;
}

// A whole number of days, hours, minutes or seconds as the page writes it: "7 d", "24 h", "5 min".
export function span(seconds: number): string {
  if (seconds > 86400 && seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds >= 3600 && seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds >= 60 && seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

// The buckets on a time line, with a null row where one or more buckets are missing.
export function timeline(h: Pick<ClusterHistory, "bucket_s" | "buckets">): { x: number[]; rows: (HistoryBucket | null)[] } {
  const x: number[] = [];
  const rows: (HistoryBucket | null)[] = [];
  let last: number | undefined;
  for (const b of h.buckets) {
    const at = Date.parse(b.at) / 1000;
    // Half a bucket of slack: a start a few milliseconds late is still the next bucket, while one
    // missing bucket puts two between starts.
    if (last !== undefined && at - last > h.bucket_s * 1.5) {
      x.push(last + h.bucket_s);
      rows.push(null);
    }
    x.push(at);
    rows.push(b);
    last = at;
  }
  return { x, rows };
}

// Every failure class any bucket of the window saw, in a stable order so colours keep to classes
// from one refresh to the next.
export function failureClasses(buckets: HistoryBucket[]): string[] {
  return [...new Set(buckets.flatMap((b) => Object.keys(b.failed_attempts ?? {})))].sort();
}

// Failure classes take the palette's colours other than started's in turn; past them (a window with
// many kinds of failure), the same colours dashed.
const failureColours = ["--series-2", "--series-4", "--series-5", "--series-6", "--series-7"];

const oneDecimal = (v: number) => `${v.toFixed(1)} %`;

// A cancel ends an attempt with the class "cancelled", but it is a person's choice, not a failure.
export function attemptEndLabel(cls: string): string {
  return cls === "cancelled" ? "cancelled" : `failed: ${cls}`;
}

export function historyCharts(h: ClusterHistory): TimeChartData[] {
  const { x, rows } = timeline(h);
  const of = (value: (b: HistoryBucket) => number | null) => rows.map((b) => (b ? value(b) : null));
  const windowLabel = span(h.window_s);
  const noSamples = `No samples in the last ${windowLabel}: ${h.sample_interval_s
    ? "the daemon was down or has not sampled yet" : "the daemon keeps no history (--history-interval-s 0)"}.`;
  const chart = (title: string, axis: string, format: (v: number) => string, series: TimeSeries[],
                 more: Partial<TimeChartData> = {}): TimeChartData => ({
    title, axis, format, series, x, window: windowLabel, empty: noSamples,
    range: [Date.parse(h.from) / 1000, Date.parse(h.to) / 1000],
    points: x.filter((_, i) => series.some((s) => s.values[i] !== null)).length,
    ...more,
  });
  // Attempts and goodput tell of other users' jobs: an answer to a role that reads only its own
  // carries the gauges alone, and those two charts say so.
  const activity = h.activity;
  const attempts: TimeSeries[] = activity ? [
    { label: "started", colour: "--series-3", values: of((b) => b.started_attempts ?? null) },
    ...failureClasses(h.buckets).map((c, i) => ({
      label: attemptEndLabel(c), colour: failureColours[i % failureColours.length],
      dash: i < failureColours.length ? undefined : [4, 3],
      values: of((b) => b.failed_attempts?.[c] ?? 0),
    })),
  ] : [];
  const goodput: TimeSeries[] = activity ? [
    { label: "goodput", colour: "--series-3", values: of((b) => (typeof b.goodput === "number" ? b.goodput * 100 : null)) },
  ] : [];
  const noGoodput = h.buckets.length ? `No goodput in the last ${windowLabel}: no job's core-seconds ended in it.` : noSamples;
  return [
    chart("Cores", "cores", (v) => count(v, "core"), [
      { label: "allocated", colour: "--series-1", values: of((b) => b.allocated_cores) },
      { label: "usable", colour: "--series-3", values: of((b) => b.usable_cores) },
      { label: "total", colour: "--muted", dash: [6, 4], values: of((b) => b.total_cores) },
    ]),
    chart("Queue depth", "pending jobs", (v) => count(v, "job"), [
      { label: "pending (mean)", colour: "--series-1", values: of((b) => b.pending_jobs) },
      { label: "pending (max)", colour: "--series-2", dash: [2, 3], values: of((b) => b.pending_jobs_max) },
    ]),
    chart("Attempts", `attempts per ${span(h.bucket_s)}`, (v) => count(v, "attempt"), attempts, activity ? {} : {
      empty: "Attempts are shown only to roles that read every job: they count other users' jobs too.",
    }),
    chart("Goodput", "% of core-s ended", oneDecimal, goodput, {
      yMax: 100,
      empty: activity ? noGoodput : "Goodput is shown only to roles that read every job: it counts other users' jobs too.",
    }),
  ];
}

// The values alone between gaps: a line of one point draws nothing, so the chart draws these as dots.
export function isolated(values: (number | null)[]): number[] {
  const none = (i: number) => i < 0 || i >= values.length || values[i] === null;
  return values.flatMap((v, i) => (v !== null && none(i - 1) && none(i + 1) ? [i] : []));
}

// A time axis's labels, 24-hour in the viewer's zone (uPlot's own are 12-hour): "14:00", or the date
// ("11-29") at midnight and when ticks are a day or more apart.
export function timeTicks(splits: number[], incrementS: number, timeZone?: string): string[] {
  return splits.map((s) => {
    const [date, time] = localTime(new Date(s * 1000).toISOString(), timeZone).split(" ");
    return incrementS >= 86400 || time.startsWith("00:00") ? date.slice(5) : time.slice(0, 5);
  });
}

// The time the legend shows for the point under the cursor, as every time on the page is written.
export function legendTime(s: number, timeZone?: string): string {
  return localTime(new Date(s * 1000).toISOString(), timeZone);
}
