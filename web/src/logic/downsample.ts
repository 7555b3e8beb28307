// Chart data: the server already downsamples to buckets with min and max; a chart narrower than
// that is reduced again here the same way (mean of means, min of mins, max of maxes), so a
// spike is never averaged away.
import type { MetricPoint } from "./types";

export interface Series { x: number[]; mean: (number | null)[]; min: (number | null)[]; max: (number | null)[] }

export function downsample(points: { x: number; y: number | null; lo?: number | null; hi?: number | null }[],
                           maxPoints: number): Series {
  const out: Series = { x: [], mean: [], min: [], max: [] };
  if (maxPoints < 1) return out;
  const per = Math.max(1, Math.ceil(points.length / maxPoints));
  for (let i = 0; i < points.length; i += per) {
    const bucket = points.slice(i, i + per);
    const ys = bucket.map((p) => p.y).filter((y): y is number => y !== null && Number.isFinite(y));
    const los = bucket.map((p) => p.lo ?? p.y).filter((y): y is number => y !== null && y !== undefined && Number.isFinite(y));
    const his = bucket.map((p) => p.hi ?? p.y).filter((y): y is number => y !== null && y !== undefined && Number.isFinite(y));
    out.x.push(bucket[bucket.length - 1].x);
    out.mean.push(ys.length ? ys.reduce((a, b) => a + b, 0) / ys.length : null);
    out.min.push(los.length ? Math.min(...los) : null);
    out.max.push(his.length ? Math.max(...his) : null);
  }
  return out;
}

export type MetricName = "loss" | "grad_norm" | "lr" | "samples_per_s";

export function metricSeries(points: MetricPoint[], name: MetricName, maxPoints: number): Series {
  return downsample(points.map((p) => ({
    x: p.step,
    y: p[name],
    lo: name === "loss" ? p.loss_min : undefined,
    hi: name === "loss" ? p.loss_max : name === "grad_norm" ? p.grad_norm_max : undefined,
  })), maxPoints);
}

// The steps where a new attempt took over: its resume points, marked on every chart.
export function attemptBoundaries(points: MetricPoint[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < points.length; i++) {
    if (points[i].attempt_id !== points[i - 1].attempt_id) out.push(points[i].first_step);
  }
  return out;
}

const finite = (v: number | null): v is number => v !== null && Number.isFinite(v);

// Whether a series has anything to draw: a chart without it says so in a sentence instead.
export function hasValues(s: Series): boolean {
  return s.mean.some(finite) || s.min.some(finite) || s.max.some(finite);
}

// Whether the series can be drawn on a log scale: some values, and every one of them above zero.
export function logScaleFits(s: Series): boolean {
  return hasValues(s) && [s.mean, s.min, s.max].every((values) => values.every((v) => !finite(v) || v > 0));
}

// Whether the series has a min-max band wider than its mean (else it draws, and lists, only the mean).
export function hasBand(s: Series): boolean {
  return s.min.some((v, i) => v !== s.max[i]);
}
