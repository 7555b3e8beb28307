import { describe, expect, it } from "vitest";
import { attemptOutput, checkpointFailureSentence, noMetricsSentence, stragglerSentence, bandwidth, coreHours, cores, duration, jobLabel, jobPath, localTime, ordinal, percent, progress, rate, shape, taskCounts, utcTitle } from "./format";
import { pendingSentence } from "./pending";
import { attemptBoundaries, downsample, metricSeries } from "./downsample";
import { addEvents, globMatch, matchesFilter } from "./events";
import { isEnded, mayCancel, operatesNodes, readsEveryJob, visibleJobs } from "./roles";
import { SseParser } from "./sse";
import type { Job, MetricPoint, TrainyardEvent, Who } from "./types";

const job = (over: Partial<Job> = {}): Job => ({
  id: 5, name: "train", user: "alice", share: "vision", state: "PENDING",
  submitted_at: "2026-11-24T21:00:00Z", spec: { name: "train" }, ...over,
});

describe("failed checkpoint writes", () => {
  it("say how many and quote the last error", () => {
    expect(checkpointFailureSentence({ count: 3, last_error: "open /ckpt/step-20: Permission denied" }))
      .toBe("3 checkpoint writes failed, the last with: open /ckpt/step-20: Permission denied");
    expect(checkpointFailureSentence({ count: 1, last_error: "disk full" })).toBe("1 checkpoint write failed, the last with: disk full");
  });
});

describe("a straggler", () => {
  it("is named by rank, node and its ratio to one decimal", () => {
    expect(stragglerSentence({ rank: 1, node: "trn-3", ratio: 2.94 })).toBe("rank 1 on trn-3 took 2.9x the other ranks' median time per step");
  });
});

describe("a job without metrics", () => {
  it("says whether it reported steps, and how to send metrics when it did", () => {
    expect(noMetricsSentence([])).toBe("No steps reported yet.");
    expect(noMetricsSentence([{ last_step: 0 }, {}])).toBe("No steps reported yet.");
    // A command job that writes only its progress file has steps all the same.
    expect(noMetricsSentence([{ steps_completed: 99 }])).toMatch(/^99 steps reported, without metrics/);
    expect(noMetricsSentence([{ last_step: 40 }, { last_step: 99 }])).toBe(
      "99 steps reported, without metrics: report loss, learning rate and throughput with trainyard.report(step, loss=..., lr=...) to chart them.");
  });
});

describe("a failed attempt's last output", () => {
  const attempt = { number: 2, nodes: ["trn-1", "trn-3"] };
  it("is titled with its attempt, rank and that rank's node, its lines as they came", () => {
    expect(attemptOutput({ ...attempt, output: "first line\nModuleNotFoundError: No module named x\n", output_rank: 1 })).toEqual({
      title: "Last output of attempt 2 (rank 1 on trn-3)", text: "first line\nModuleNotFoundError: No module named x",
    });
  });
  it("names the rank alone when its node is not known, and neither when the rank is not", () => {
    expect(attemptOutput({ ...attempt, output: "x", output_rank: 5 })?.title).toBe("Last output of attempt 2 (rank 5)");
    expect(attemptOutput({ ...attempt, output: "x" })?.title).toBe("Last output of attempt 2");
  });
  it("keeps markup as text and is absent without output", () => {
    expect(attemptOutput({ ...attempt, output: "<img src=x onerror=alert(1)>", output_rank: 0 })?.text).toBe("<img src=x onerror=alert(1)>");
    expect(attemptOutput(attempt)).toBeUndefined();
    expect(attemptOutput({ ...attempt, output: "\n" })).toBeUndefined();
  });
});

describe("format", () => {
  it("names jobs, array tasks and folded arrays as the CLI does, with the tasks by state", () => {
    expect(jobLabel(job())).toBe("5");
    expect(jobLabel(job({ id: 14, array: { job_id: 12, task_id: 7, task_count: 10 } }))).toBe("12_7");
    expect(jobLabel(job({ id: 12, spec: { name: "train", array: "0-9:3%2" }, array: { job_id: 12, task_count: 4, counts: {} } })))
      .toBe("12_[0-9:3]");
    expect(taskCounts({ SUCCEEDED: 7, PENDING: 1, RUNNING: 2, FAILED: 0 })).toBe("2 RUNNING, 1 PENDING, 7 SUCCEEDED");
    expect(taskCounts(undefined)).toBe("");
  });
  it("links a task by its ID_N, so task 0 does not open its array's page", () => {
    expect(jobPath(job())).toBe("/jobs/5");
    expect(jobPath(job({ id: 12, array: { job_id: 12, task_id: 0, task_count: 3 } }))).toBe("/jobs/12_0");
    expect(jobPath(job({ id: 12, array: { job_id: 12, task_count: 3, counts: {} } }))).toBe("/jobs/12");
  });
  it("names a job by its own id when its array does not name the array's id", () => {
    expect(jobLabel(job({ id: 14, array: { task_id: 7, task_count: 10 } }))).toBe("14");
    expect(jobPath(job({ id: 14, array: { task_id: 7, task_count: 10 } }))).toBe("/jobs/14");
  });
  it("writes durations with units", () => {
    expect(duration(0.25)).toBe("250 ms");
    expect(duration(42)).toBe("42 s");
    expect(duration(252)).toBe("4 min 12 s");
    expect(duration(7500)).toBe("2 h 5 min");
    expect(duration(3 * 86400 + 4 * 3600)).toBe("3 d 4 h");
    expect(duration(-1)).toBe("—");
  });
  it("writes quantities with units", () => {
    expect(cores(1)).toBe("1 core");
    expect(cores(1024)).toBe("1,024 cores");
    expect(shape({ nodes: 2, cores_per_node: 4 })).toBe("2 nodes × 4 cores");
    expect(shape({ nodes: 2 })).toBe("2 whole nodes");
    expect(shape({})).toBe("1 whole node");
    expect(coreHours(9000)).toBe("2.5 core-h");
    expect(coreHours(92.04)).toBe("92 core-s");
    expect(percent(0.98812)).toBe("98.8 %");
    expect(percent(null)).toBe("—");
    expect(rate(1234.56, "samples")).toBe("1,234.6 samples/s");
    expect(bandwidth(0.5e9)).toBe("500 MB/s");
    expect(bandwidth(12.25e9)).toBe("12.3 GB/s");
    expect(bandwidth(2500)).toBe("2.5 kB/s");
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal)).toEqual(
      ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]);
  });
  it("writes a running job's progress with the time left at its throughput", () => {
    expect(progress(1000, 4000, 6400, 64)).toBe("step 1,000 of 4,000 (25 %) · 6,400 samples/s · about 30 s left");
    expect(progress(1000, 4000, null, 64)).toBe("step 1,000 of 4,000 (25 %)");
    expect(progress(17, undefined, 10, 64)).toBe("step 17");
  });
  it("writes times in the viewer's zone, compact and 24-hour, with UTC for the title", () => {
    const iso = "2026-11-24T21:00:05.123Z";
    expect(utcTitle(iso)).toBe("2026-11-24 21:00:05 UTC");
    expect(localTime(iso, "Asia/Tokyo")).toBe("2026-11-25 06:00:05");
    expect(localTime(iso, "America/New_York")).toBe("2026-11-24 16:00:05");
    expect(localTime(undefined)).toBe("—");
  });
});

describe("pending reasons", () => {
  const now = new Date("2026-11-24T21:04:12Z");
  it("say where the job is, for how long and why", () => {
    expect(pendingSentence(job({ queue_position: 3, pending_reason: { code: "resources", message: "needs 2 nodes with 32 free cores; 1 has them." } }), now))
      .toBe("3rd in the queue of share vision for 4 min 12 s: needs 2 nodes with 32 free cores; 1 has them.");
  });
  it("fall back to the reason code's sentence", () => {
    expect(pendingSentence(job({ queue_position: 1, pending_reason: { code: "share_cap", message: "" } }), now))
      .toBe("1st in the queue of share vision for 4 min 12 s: its share has reached its cap on running cores.");
    expect(pendingSentence(job(), now)).toBe("In the queue of share vision for 4 min 12 s: waiting for the scheduler's next pass.");
    expect(pendingSentence(job({ queue_position: 1, pending_reason: { code: "nodes_unavailable", message: "" } }), now))
      .toBe("1st in the queue of share vision for 4 min 12 s: fewer nodes in service than it needs could hold it; it waits for nodes to return to service.");
  });
});

describe("downsample", () => {
  it("keeps every point when there is room", () => {
    const s = downsample([{ x: 1, y: 3 }, { x: 2, y: 1 }], 10);
    expect(s.x).toEqual([1, 2]);
    expect(s.mean).toEqual([3, 1]);
  });
  it("keeps the extremes of each bucket so a spike survives", () => {
    const points = Array.from({ length: 100_000 }, (_, i) => ({ x: i + 1, y: i === 5000 ? 1000 : 1 }));
    const s = downsample(points, 500);
    expect(s.x.length).toBe(500);
    expect(Math.max(...(s.max as number[]))).toBe(1000);
    expect(Math.min(...(s.min as number[]))).toBe(1);
    expect(s.x[s.x.length - 1]).toBe(100_000);
  });
  it("skips missing values instead of plotting zeros", () => {
    expect(downsample([{ x: 1, y: null }, { x: 2, y: null }], 1).mean).toEqual([null]);
  });
  const point = (step: number, attempt: number, loss: number): MetricPoint => ({
    step, first_step: step, attempt_id: attempt, loss, loss_min: loss - 1, loss_max: loss + 1,
    grad_norm: 1, grad_norm_max: 2, param_norm: 3, lr: 1e-3, samples_per_s: 100, non_finite_losses: 0, spikes: 0,
  });
  it("uses the server's min-max band for loss and marks attempt boundaries", () => {
    const pts = [point(1, 7, 5), point(2, 7, 4), point(3, 9, 3)];
    const loss = metricSeries(pts, "loss", 10);
    expect(loss.min).toEqual([4, 3, 2]);
    expect(loss.max).toEqual([6, 5, 4]);
    expect(metricSeries(pts, "grad_norm", 10).max).toEqual([2, 2, 2]);
    expect(attemptBoundaries(pts)).toEqual([3]);
  });
});

describe("events", () => {
  const ev = (over: Partial<TrainyardEvent>): TrainyardEvent => ({
    id: 1, time: "2026-11-24T21:00:00Z", type: "job.failed", severity: "error", message: "m", details: {}, ...over,
  });
  it("match type globs", () => {
    expect(globMatch("job.*", "job.failed")).toBe(true);
    expect(globMatch("node.*", "job.failed")).toBe(false);
    expect(globMatch("audit.*", "audit.token.created")).toBe(true);
    expect(globMatch("job.fail?d", "job.failed")).toBe(true);
    expect(globMatch("job.(x)", "job.(x)")).toBe(true);
  });
  it("filter by type, job, node and least severity", () => {
    expect(matchesFilter(ev({ job: 5 }), { type: "job.*", job: 5 })).toBe(true);
    expect(matchesFilter(ev({ job: 6 }), { job: 5 })).toBe(false);
    expect(matchesFilter(ev({ node: "trn-1" }), { node: "trn-2" })).toBe(false);
    expect(matchesFilter(ev({ severity: "info" }), { severity: "warning" })).toBe(false);
    expect(matchesFilter(ev({ severity: "error" }), { severity: "warning" })).toBe(true);
  });
  it("keep the newest, each once", () => {
    const feed = addEvents([ev({ id: 2 }), ev({ id: 1 })], [ev({ id: 2 }), ev({ id: 3 }), ev({ id: 4 })], 3);
    expect(feed.map((e) => e.id)).toEqual([4, 3, 2]);
  });
});

describe("roles", () => {
  const alice: Who = { user: "alice", role: "user", token_id: "t1" };
  const admin: Who = { user: "root", role: "admin", token_id: "t2" };
  const viewer: Who = { user: "vic", role: "viewer", token_id: "t3" };
  it("gate node operations to admins and operators", () => {
    expect(operatesNodes("admin")).toBe(true);
    expect(operatesNodes("operator")).toBe(true);
    expect(operatesNodes("user")).toBe(false);
    expect(operatesNodes("viewer")).toBe(false);
  });
  it("let owners and admins cancel jobs that have not ended", () => {
    expect(mayCancel(alice, job({ state: "RUNNING" }))).toBe(true);
    expect(mayCancel(alice, job({ state: "RUNNING", user: "bob" }))).toBe(false);
    expect(mayCancel(admin, job({ state: "RUNNING", user: "bob" }))).toBe(true);
    expect(mayCancel(admin, job({ state: "SUCCEEDED" }))).toBe(false);
    expect(mayCancel(viewer, job({ state: "RUNNING", user: "vic" }))).toBe(false);
  });
  it("tell ended jobs, whose logs no longer change, from the others", () => {
    expect(["PENDING", "STARTING", "RUNNING"].map((s) => isEnded(s as Job["state"]))).toEqual([false, false, false]);
    expect(["SUCCEEDED", "FAILED", "CANCELLED"].map((s) => isEnded(s as Job["state"]))).toEqual([true, true, true]);
  });
  it("show users only their own jobs", () => {
    const jobs = [job({ user: "alice" }), job({ user: "bob" })];
    expect(visibleJobs(alice, jobs).map((j) => j.user)).toEqual(["alice"]);
    expect(visibleJobs(viewer, jobs).length).toBe(2);
    expect(readsEveryJob("user")).toBe(false);
  });
});

describe("server-sent events", () => {
  it("parse messages split across chunks, skipping keep-alives", () => {
    const p = new SseParser();
    expect(p.push(": keep-alive\n\nid: 7\nevent: job.started\nda")).toEqual([]);
    expect(p.push('ta: {"id":7}\n\nid: 8\r\nevent: job.succeeded\r\ndata: {"id":8}\r\n\r\n')).toEqual([
      { id: "7", event: "job.started", data: '{"id":7}' },
      { id: "8", event: "job.succeeded", data: '{"id":8}' },
    ]);
  });
  it("join multi-line data", () => {
    expect(new SseParser().push("data: a\ndata: b\n\n")).toEqual([{ event: "message", data: "a\nb" }]);
  });
});

describe("paging", () => {
  it("asks for the pages under the rows in view", async () => {
    const { pagesFor, rowOf } = await import("./paging");
    expect(pagesFor(0, 29, 200)).toEqual([0]);
    expect(pagesFor(190, 230, 200)).toEqual([0, 1]);
    expect(pagesFor(9_990, 10_010, 200)).toEqual([49, 50]);
    expect(pagesFor(5, 4, 200)).toEqual([]);
    const pages = new Map([[1, ["a", "b"]]]);
    expect(rowOf(pages, 201, 200)).toBe("b");
    expect(rowOf(pages, 0, 200)).toBeUndefined();
  });
});

describe("health records", () => {
  it("name the failed tests with their values and keep the best exact busbw per collective", async () => {
    const { summarizeHealth } = await import("./health");
    const gemm = (status: "passed" | "failed", measured: number, limit: number) =>
      ({ test: "gemm" as const, status, measured, limit, duration_ms: 12, reason: status === "passed" ? "" : "result off" });
    const exact = (kind: "all_reduce" | "all_gather", busbw: number) =>
      ({ kind, exact: true, bytes: 1 << 20, seconds: 0.001, busbw, error: "" });
    const rank = (collectives: ReturnType<typeof exact>[]) => ({ rank: 0, world_size: 2, collectives, error: "" });
    const s = summarizeHealth({
      at: "2026-11-24T21:00:00Z", check_id: 7, kind: "on_demand", verdict: "UNHEALTHY", reason: "core 3 failed gemm",
      accelerator: { duration_ms: 900, cores: [
        { core: 0, checks: [gemm("passed", 0, 0.001)] },
        { core: 3, checks: [gemm("failed", 1.1644957730353838, 0.0000639970182)] },
      ] },
      collective: [
        // A wrong result keeps the time it took, which is no figure of the link.
        { nodes: ["a", "b"], result: rank([exact("all_reduce", 2.5), { ...exact("all_gather", 9), exact: false, error: "wrong result" }]) },
        { nodes: ["a", "c"], result: rank([exact("all_reduce", 3)]) },
        { nodes: ["a", "d"], result: { ...rank([]), error: "connection reset by peer", failed_peer: 1 } },
      ],
    });
    expect(s.verdict).toBe("UNHEALTHY");
    expect(s.tests).toBe(5);
    expect(s.failed).toEqual(["core 3 gemm failed: measured 1.16 (limit 0.000064)", "all_gather with a, b: wrong result",
      "collective suite with a, d stopped: connection reset by peer (rank 1 failed)"]);
    expect(s.busbw).toEqual({ all_reduce: 3 });
  });
});
