import { describe, expect, it } from "vitest";
import { pendingSentence } from "./pending";
import type { Job } from "./types";
import {
  arraysToExpand, arrayTasksUrl, groupWaiting, loadPending, pendingHeader, pendingInCluster, pendingUrl, reasonCount,
  splitPending, waitingSentence,
} from "./waiting";

const job = (id: number, over: Partial<Job> = {}): Job => ({
  id, name: `job-${id}`, user: "alice", share: "vision", state: "PENDING",
  submitted_at: `2026-11-24T21:00:${String(id % 60).padStart(2, "0")}Z`, spec: { name: `job-${id}` }, ...over,
});
const reason = (code: string, message = "") => ({ pending_reason: { code, message } });
const now = new Date("2026-11-24T21:04:00Z");

// An array folded into one row (GET /v1/jobs) and its pending tasks (GET /v1/jobs?array=ID).
const arrayRow = (id: number, counts: Record<string, number>): Job =>
  job(id, { name: "sweep", spec: { name: "sweep", array: "0-9%2" }, array: { job_id: id, task_count: 10, counts } });
const task = (array: number, n: number, over: Partial<Job> = {}): Job =>
  job(array + n, { name: "sweep", array: { job_id: array, task_id: n, task_count: 10 }, ...over });

describe("splitting pending jobs into ready and waiting", () => {
  it("counts jobs with a queue position as ready and keeps the rest as waiting", () => {
    const rows = [
      job(1, { queue_position: 1, ...reason("resources", "needs 2 nodes") }),
      job(2, reason("held", "held by its owner")),
      job(3, reason("dependency", "waiting for job 1 to succeed")),
      job(4, { queue_position: 2, ...reason("priority") }),
      job(5),
    ];
    const split = splitPending(rows);
    expect(split.ready).toBe(2);
    expect(split.waiting.map((e) => [e.job.id, e.code, e.tasks])).toEqual([[2, "held", 1], [3, "dependency", 1], [5, "", 1]]);
    expect(split.waitingJobs).toBe(3);
  });

  it("counts a queued job that waits for nodes to return as waiting, not ready to start", () => {
    const rows = [
      job(1, { queue_position: 1, ...reason("nodes_unavailable", "needs 3 nodes; 2 in service") }),
      job(2, { queue_position: 2, ...reason("resources") }),
    ];
    const split = splitPending(rows);
    expect(split.ready).toBe(1);
    const groups = groupWaiting(split.waiting);
    expect(groups.map((g) => [g.code, g.title, g.jobs])).toEqual([["nodes_unavailable", "Waiting for nodes to return to service", 1]]);
    expect(pendingHeader(split.ready, groups)).toBe("2 pending: 1 ready to start, 1 waiting (1 for nodes to return)");
    expect(waitingSentence(split.waiting[0], now)).toBe("In the queue of share vision for 3 min 59 s: needs 3 nodes; 2 in service.");
  });

  it("splits a folded array's pending tasks by whether they are queued and by reason", () => {
    const row = arrayRow(20, { RUNNING: 2, PENDING: 5, SUCCEEDED: 3 });
    const tasks = [
      task(20, 5, { queue_position: 3, ...reason("resources") }),
      task(20, 6, reason("array_limit", "array 20 runs at most 2 tasks at once (%2), and 3 are queued or running")),
      task(20, 9, reason("array_limit", "array 20 runs at most 2 tasks at once (%2), and 3 are queued or running")),
      task(20, 7, reason("array_limit", "array 20 runs at most 2 tasks at once (%2), and 3 are queued or running")),
      task(20, 8, reason("held", "held by an admin")),
    ];
    expect(arraysToExpand([row, job(1), arrayRow(40, { SUCCEEDED: 10 })])).toEqual([20]);
    const split = splitPending([row], new Map([[20, tasks]]));
    expect(split.ready).toBe(1);
    expect(split.waiting.map((e) => [e.code, e.tasks, e.taskIds])).toEqual([["array_limit", 3, [6, 7, 9]], ["held", 1, [8]]]);
    expect(split.waitingJobs).toBe(4);
  });

  it("counts an array whose tasks did not load as waiting for a reason not known yet", () => {
    const split = splitPending([arrayRow(20, { PENDING: 4, RUNNING: 1 })]);
    expect(split.ready).toBe(0);
    expect(split.waiting.map((e) => [e.code, e.tasks])).toEqual([["", 4]]);
  });

  it("does not ask for the tasks of an array row that does not name its array", () => {
    const row = job(20, { array: { task_count: 10, counts: { PENDING: 4 } } });
    expect(arraysToExpand([row])).toEqual([]);
    expect(splitPending([row], new Map([[20, [task(20, 1)]]])).waiting.map((e) => [e.code, e.tasks])).toEqual([["", 4]]);
  });
});

describe("grouping waiting jobs by reason", () => {
  it("orders held, dependency, backoff, array limit, other codes, then none; oldest first in each", () => {
    const { waiting } = splitPending([
      job(9), job(8, reason("array_limit")), job(7, reason("backoff")), job(6, reason("dependency")),
      job(5, reason("held")), job(4, reason("dependency")), job(3, reason("mystery_code")), job(2, reason("held")),
    ]);
    const groups = groupWaiting(waiting);
    expect(groups.map((g) => [g.code, g.jobs, g.entries.map((e) => e.job.id)])).toEqual([
      ["held", 2, [2, 5]], ["dependency", 2, [4, 6]], ["backoff", 1, [7]], ["array_limit", 1, [8]],
      ["mystery_code", 1, [3]], ["", 1, [9]],
    ]);
    expect(groups.map((g) => g.title)).toEqual([
      "Held", "Waiting on dependencies", "In retry backoff", "Held back by an array limit", "Waiting: mystery code",
      "Reason not known yet",
    ]);
  });
});

describe("the overview's pending count", () => {
  it("counts jobs held by their owner or an admin as the queue does", () => {
    expect(pendingInCluster([{ pending_jobs: 4, held_jobs: 1 }, { pending_jobs: 2 }])).toBe("7 pending in the cluster (1 held)");
    expect(pendingInCluster([{ pending_jobs: 1200, held_jobs: 0 }])).toBe("1,200 pending in the cluster");
    expect(pendingInCluster([])).toBe("0 pending in the cluster");
  });
});

describe("the queue view's header", () => {
  const groupsOf = (codes: string[]) => groupWaiting(splitPending(codes.map((c, i) => job(i + 1, reason(c)))).waiting);

  it("adds up: every pending job is ready or waiting for a reason", () => {
    const groups = groupsOf(["held", "dependency", "held", "array_limit", "dependency"]);
    expect(pendingHeader(3, groups)).toBe("8 pending: 3 ready to start, 5 waiting (2 held, 2 on dependencies, 1 array limit)");
  });

  it("says at least when pages were left unloaded", () => {
    expect(pendingHeader(1200, groupsOf(["held", "dependency"]), true))
      .toBe("At least 1,202 pending: 1,200 ready to start, at least 2 waiting (of those loaded: 1 held, 1 on a dependency)");
  });

  it("has words for none", () => {
    expect(pendingHeader(0, [])).toBe("Nothing pending.");
    expect(pendingHeader(2, [])).toBe("2 pending: 2 ready to start, none waiting");
    expect(reasonCount("backoff", 1)).toBe("1 in retry backoff");
    expect(reasonCount("array_limit", 3)).toBe("3 array limits");
    expect(reasonCount("", 2)).toBe("2 with no reason yet");
  });
});

describe("waiting sentences", () => {
  it("say a held or blocked job waits outside the queue, and why", () => {
    expect(pendingSentence(job(5, reason("held", "held by its owner")), now))
      .toBe("Waiting outside the queue of share vision for 3 min 55 s: held by its owner.");
    expect(pendingSentence(job(5, reason("array_limit")), now))
      .toBe("Waiting outside the queue of share vision for 3 min 55 s: its array already has as many tasks queued or running as its %N limit allows.");
  });

  it("name an array entry's tasks before the sentence", () => {
    const row = arrayRow(20, { PENDING: 7 });
    const tasks = [6, 7, 8, 9, 10, 11, 12].map((n) => task(20, n, reason("array_limit", "array 20 runs at most 2 tasks at once")));
    const [entry] = splitPending([row], new Map([[20, tasks]])).waiting;
    expect(waitingSentence(entry, now)).toBe(
      "7 tasks (20_6, 20_7, 20_8, 20_9, 20_10, …): Waiting outside the queue of share vision for 3 min 40 s: array 20 runs at most 2 tasks at once.");
    const single = splitPending([job(3, reason("dependency", "waiting for job 1 to succeed"))]).waiting[0];
    expect(waitingSentence(single, now)).toBe("Waiting outside the queue of share vision for 3 min 57 s: waiting for job 1 to succeed.");
  });
});

describe("loading every pending job", () => {
  it("follows the cursor up to the page limit, then expands each array's pending tasks", async () => {
    const asked: string[] = [];
    const answers: Record<string, { jobs: Job[]; next: string | null }> = {
      [pendingUrl(2, null)]: { jobs: [job(30, reason("held")), arrayRow(20, { PENDING: 2 })], next: "c1" },
      [pendingUrl(2, "c1")]: { jobs: [job(10, { queue_position: 1 })], next: "c2" },
      [arrayTasksUrl(20, null)]: { jobs: [task(20, 0, reason("array_limit"))], next: "t1" },
      [arrayTasksUrl(20, "t1")]: { jobs: [task(20, 1, { queue_position: 2 })], next: null },
    };
    const get = async <T,>(path: string): Promise<T> => {
      asked.push(path);
      const answer = answers[path];
      if (!answer) throw new Error(`unexpected ${path}`);
      return answer as T;
    };
    const load = await loadPending(get, 2, 2);
    expect(asked).toEqual([
      "/v1/jobs?state=PENDING&limit=2", "/v1/jobs?state=PENDING&limit=2&cursor=c1",
      "/v1/jobs?array=20&state=PENDING&after=19&limit=1000", "/v1/jobs?array=20&state=PENDING&after=19&limit=1000&cursor=t1",
    ]);
    expect(load.more).toBe(true);
    expect(load.rows.map((j) => j.id)).toEqual([30, 20, 10]);
    const split = splitPending(load.rows, load.arrayTasks);
    expect(split.ready).toBe(2);
    expect(split.waitingJobs).toBe(2);
  });

  it("keeps the listing when an array's tasks fail to load, and says why", async () => {
    const get = async <T,>(path: string): Promise<T> => {
      if (path.startsWith("/v1/jobs?state=PENDING")) return { jobs: [arrayRow(20, { PENDING: 3 })], next: null } as T;
      throw new Error("the daemon cannot be reached");
    };
    const load = await loadPending(get, 4);
    expect(load.more).toBe(false);
    expect(load.error).toMatch(/cannot be reached/);
    expect(splitPending(load.rows, load.arrayTasks).waiting.map((e) => [e.code, e.tasks])).toEqual([["", 3]]);
  });
});
