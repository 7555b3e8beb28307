import { describe, expect, it } from "vitest";
import { failureClasses, historyCharts, isolated, legendTime, openingWindow, span, timeTicks, timeline } from "./history";
import type { ClusterHistory, HistoryBucket } from "./types";

const bucket = (at: string, over: Partial<HistoryBucket> = {}): HistoryBucket => ({
  at, samples: 5, total_cores: 128, usable_cores: 96, allocated_cores: 64,
  pending_jobs: 7.6, pending_jobs_max: 9, running_jobs: 4, started_attempts: 3, failed_attempts: {},
  ended_core_s: 1000, productive_core_s: 900, goodput: 0.9, ...over,
});

const history = (buckets: HistoryBucket[], over: Partial<ClusterHistory> = {}): ClusterHistory => ({
  window_s: 86400, bucket_s: 300, sample_interval_s: 60, activity: true,
  from: "2026-11-28T19:00:00.000Z", to: "2026-11-29T19:00:00.000Z", buckets, ...over,
});

const s = (iso: string) => Date.parse(iso) / 1000;
const byTitle = (h: ClusterHistory, title: string) => historyCharts(h).find((c) => c.title === title)!;

describe("the cluster's history on a time line", () => {
  it("puts consecutive buckets side by side, x in Unix seconds at each bucket's start", () => {
    const { x, rows } = timeline(history([bucket("2026-11-29T18:50:00.000Z"), bucket("2026-11-29T18:55:00.000Z")]));
    expect(x).toEqual([s("2026-11-29T18:50:00Z"), s("2026-11-29T18:55:00Z")]);
    expect(rows.every((r) => r !== null)).toBe(true);
  });
  it("puts one null point where missing buckets begin, so a line breaks there", () => {
    const { x, rows } = timeline(history([
      bucket("2026-11-29T18:00:00.000Z"), bucket("2026-11-29T18:05:00.000Z"),
      bucket("2026-11-29T18:30:00.000Z"),  // 18:10 to 18:25 missing: the daemon was down
      bucket("2026-11-29T18:40:00.000Z"),  // 18:35 missing
    ]));
    expect(x).toEqual(["18:00", "18:05", "18:10", "18:30", "18:35", "18:40"].map((t) => s(`2026-11-29T${t}:00Z`)));
    expect(rows.map((r) => r?.at ?? null)).toEqual([
      "2026-11-29T18:00:00.000Z", "2026-11-29T18:05:00.000Z", null, "2026-11-29T18:30:00.000Z", null, "2026-11-29T18:40:00.000Z",
    ]);
  });
  it("takes a start a few milliseconds late as the next bucket, not a gap", () => {
    expect(timeline(history([bucket("2026-11-29T18:00:00.000Z"), bucket("2026-11-29T18:05:00.004Z")])).x).toHaveLength(2);
  });
  it("is empty without buckets", () => {
    expect(timeline(history([]))).toEqual({ x: [], rows: [] });
  });
});

describe("the history charts", () => {
  const gapped = history([
    bucket("2026-11-29T18:00:00.000Z", { allocated_cores: 60, failed_attempts: { user_error: 2 } }),
    bucket("2026-11-29T18:15:00.000Z", { allocated_cores: 70, goodput: null, failed_attempts: { out_of_memory: 1 } }),
  ]);
  it("are cores, queue depth, attempts and goodput, over the whole window", () => {
    const charts = historyCharts(gapped);
    expect(charts.map((c) => c.title)).toEqual(["Cores", "Queue depth", "Attempts", "Goodput"]);
    for (const c of charts) {
      expect(c.range).toEqual([s(gapped.from), s(gapped.to)]);
      expect(c.window).toBe("24 h");
      for (const series of c.series) expect(series.values).toHaveLength(c.x.length);
    }
  });
  it("draw cores allocated, usable and total, with a null at the gap", () => {
    const cores = byTitle(gapped, "Cores");
    expect(cores.series.map((x) => x.label)).toEqual(["allocated", "usable", "total"]);
    expect(cores.x).toEqual([s("2026-11-29T18:00:00Z"), s("2026-11-29T18:05:00Z"), s("2026-11-29T18:15:00Z")]);
    expect(cores.series[0].values).toEqual([60, null, 70]);
    expect(cores.series[2].values).toEqual([128, null, 128]);
    expect(cores.points).toBe(2);
    expect(new Set(cores.series.map((x) => x.colour)).size).toBe(3);
  });
  it("draw the queue's mean and max", () => {
    const queue = byTitle(gapped, "Queue depth");
    expect(queue.series.map((x) => [x.label, x.values])).toEqual([
      ["pending (mean)", [7.6, null, 7.6]], ["pending (max)", [9, null, 9]],
    ]);
  });
  it("draw started attempts and one series per failure class seen in the window, zero where a bucket had none", () => {
    const attempts = byTitle(gapped, "Attempts");
    expect(attempts.series.map((x) => [x.label, x.values])).toEqual([
      ["started", [3, null, 3]],
      ["failed: out_of_memory", [0, null, 1]],
      ["failed: user_error", [2, null, 0]],
    ]);
    expect(attempts.axis).toBe("attempts per 5 min");
    expect(new Set(attempts.series.map((x) => x.colour)).size).toBe(3);
  });
  it("call cancelled attempts cancelled, not failed", () => {
    const ended = byTitle(history([bucket("2026-11-29T18:00:00.000Z", { failed_attempts: { cancelled: 2, user_error: 1 } })]), "Attempts");
    expect(ended.series.map((x) => x.label)).toEqual(["started", "cancelled", "failed: user_error"]);
  });
  it("draw no failure series in a window without failures", () => {
    expect(byTitle(history([bucket("2026-11-29T18:00:00.000Z")]), "Attempts").series.map((x) => x.label)).toEqual(["started"]);
  });
  it("tell failure classes past the palette apart by dashes", () => {
    const classes = ["a", "b", "c", "d", "e", "f", "g"];
    const many = byTitle(history([bucket("2026-11-29T18:00:00.000Z", { failed_attempts: Object.fromEntries(classes.map((c) => [c, 1])) })]), "Attempts");
    const looks = many.series.map((x) => `${x.colour} ${x.dash ?? ""}`);
    expect(new Set(looks).size).toBe(looks.length);
  });
  it("draw goodput in percent, null where no core-seconds ended, on a fixed 0 to 100 scale", () => {
    const goodput = byTitle(gapped, "Goodput");
    expect(goodput.series[0].values).toEqual([90, null, null]);
    expect(goodput.points).toBe(1);
    expect(goodput.yMax).toBe(100);
    expect(goodput.format(97.25)).toBe("97.3 %");
  });
  it("say why a chart is empty: no samples at all (history off, or not yet), or no core-seconds ended", () => {
    const none = historyCharts(history([], { window_s: 604800, bucket_s: 3600 }));
    expect(none.every((c) => c.points === 0)).toBe(true);
    expect(none[0].empty).toBe("No samples in the last 7 d: the daemon was down or has not sampled yet.");
    expect(historyCharts(history([], { sample_interval_s: 0 }))[0].empty)
      .toBe("No samples in the last 24 h: the daemon keeps no history (--history-interval-s 0).");
    const noGoodput = byTitle(history([bucket("2026-11-29T18:00:00.000Z", { goodput: null })]), "Goodput");
    expect(noGoodput.points).toBe(0);
    expect(noGoodput.empty).toBe("No goodput in the last 24 h: no job's core-seconds ended in it.");
  });
  it("chart the gauges alone for a role that reads only its own jobs, and say why", () => {
    const gauges = ({ at, samples, total_cores, usable_cores, allocated_cores, pending_jobs, pending_jobs_max, running_jobs }: HistoryBucket) =>
      ({ at, samples, total_cores, usable_cores, allocated_cores, pending_jobs, pending_jobs_max, running_jobs });
    const charts = historyCharts(history(gapped.buckets.map(gauges), { activity: false }));
    expect(charts.map((c) => c.points)).toEqual([2, 2, 0, 0]);
    expect(charts[2].series).toEqual([]);
    expect(charts[2].empty).toBe("Attempts are shown only to roles that read every job: they count other users' jobs too.");
    expect(charts[3].empty).toBe("Goodput is shown only to roles that read every job: it counts other users' jobs too.");
  });
  it("write values with their units", () => {
    expect(byTitle(gapped, "Cores").format(1)).toBe("1 core");
    expect(byTitle(gapped, "Queue depth").format(7.6)).toBe("7.6 jobs");
  });
});

describe("failure classes", () => {
  it("are every class any bucket saw, once each, in a stable order", () => {
    expect(failureClasses([bucket("a", { failed_attempts: { user_error: 1, oom: 2 } }), bucket("b", { failed_attempts: { oom: 1, node_lost: 1 } })]))
      .toEqual(["node_lost", "oom", "user_error"]);
  });
});

describe("values alone between gaps", () => {
  it("are the ones with no value on either side, ends included", () => {
    expect(isolated([1, null, 2, 3, null, 4])).toEqual([0, 5]);
    expect(isolated([null, 5, null])).toEqual([1]);
    expect(isolated([1, 2])).toEqual([]);
    expect(isolated([])).toEqual([]);
  });
});

describe("spans", () => {
  it("are written in whole days, hours, minutes or seconds", () => {
    expect([604800, 86400, 3600, 300, 90, 45].map(span)).toEqual(["7 d", "24 h", "1 h", "5 min", "90 s", "45 s"]);
  });
});

describe("time axis labels", () => {
  it("are 24-hour times in the zone, the date at midnight and when ticks are a day apart", () => {
    const at = (iso: string) => s(iso);
    expect(timeTicks([at("2026-11-29T12:00:00Z"), at("2026-11-29T23:00:00Z"), at("2026-11-30T00:00:00Z")], 3600, "UTC"))
      .toEqual(["12:00", "23:00", "11-30"]);
    expect(timeTicks([at("2026-11-29T00:00:00Z")], 3600, "Europe/Berlin")).toEqual(["01:00"]);
    expect(timeTicks([at("2026-11-29T23:00:00Z"), at("2026-11-30T23:00:00Z")], 86400, "Europe/Berlin")).toEqual(["11-30", "12-01"]);
  });
  it("and the legend's time is the page's own", () => {
    expect(legendTime(s("2026-11-29T18:55:00Z"), "UTC")).toBe("2026-11-29 18:55:00");
  });
});

describe("the window the charts open on", () => {
  const now = new Date("2026-11-24T21:00:00Z");
  const day = 86_400;
  it("is the last hour while the cluster's samples cover less", () => {
    expect(openingWindow({ window_s: day, buckets: [bucket("2026-11-24T20:40:00Z")] }, now)).toBe("1h");
  });
  it("is the default once the samples cover a good part of it, or when there are none", () => {
    expect(openingWindow({ window_s: day, buckets: [bucket("2026-11-24T15:00:00Z")] }, now)).toBe("24h");
    expect(openingWindow({ window_s: day, buckets: [bucket("2026-11-24T19:00:00Z")] }, now)).toBe("24h");
    expect(openingWindow({ window_s: day, buckets: [] }, now)).toBe("24h");
  });
});
