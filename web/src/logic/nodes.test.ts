import { describe, expect, it } from "vitest";
import { hasBand, hasValues, logScaleFits } from "./downsample";
import { localTime, timeZoneLabel } from "./format";
import {
  compactAbove, coreSummary, densityFor, emptyNodeFilter, filterNodes, groupByRack, isBadState, longestName,
  nodeFilterFromQuery, nodeJobs, nodesPath, nodeSummary, parseJobRef, stateCounts, tileWidthCh, utilisation,
} from "./nodes";
import type { Node, NodeState } from "./types";

const node = (name: string, state: NodeState = "HEALTHY", over: Partial<Node> = {}): Node => ({
  name, cores: 8, free_cores: 8, used_cores: 0, state, connected: true, attempts: [], jobs: [], ...over,
});

describe("node map filters", () => {
  it("read from the URL, unknown states dropped, states in their order and any case", () => {
    expect(nodeFilterFromQuery("?state=down,HEALTHY,bogus&name=trn&group=none&density=compact"))
      .toEqual({ states: ["HEALTHY", "DOWN"], name: "trn", grouped: false, density: "compact" });
    expect(nodeFilterFromQuery("")).toEqual(emptyNodeFilter);
    expect(nodeFilterFromQuery("?density=huge").density).toBe("auto");
  });
  it("write a URL without the defaults, and read back the same", () => {
    expect(nodesPath(emptyNodeFilter)).toBe("/nodes");
    const f = { states: ["UNHEALTHY", "DRAINED"] as NodeState[], name: "rack 1", grouped: false, density: "tiles" as const };
    expect(nodesPath(f)).toBe("/nodes?state=UNHEALTHY,DRAINED&name=rack+1&group=none&density=tiles");
    expect(nodeFilterFromQuery(nodesPath(f).slice("/nodes".length))).toEqual(f);
  });
  it("narrow by state and by a part of the name in any case", () => {
    const nodes = [node("trn-1"), node("trn-2", "DRAINED"), node("gpu-10", "DOWN"), node("TRN-30", "UNHEALTHY")];
    expect(filterNodes(nodes, emptyNodeFilter).length).toBe(4);
    expect(filterNodes(nodes, { ...emptyNodeFilter, states: ["DRAINED", "DOWN"] }).map((n) => n.name)).toEqual(["trn-2", "gpu-10"]);
    expect(filterNodes(nodes, { ...emptyNodeFilter, name: " trn-" }).map((n) => n.name)).toEqual(["trn-1", "trn-2", "TRN-30"]);
    expect(filterNodes(nodes, { ...emptyNodeFilter, states: ["HEALTHY"], name: "10" })).toEqual([]);
  });
});

describe("node map drawing", () => {
  it("turns compact past a screenful of tiles unless a density was chosen", () => {
    expect(densityFor("auto", compactAbove)).toBe("tiles");
    expect(densityFor("auto", compactAbove + 1)).toBe("compact");
    expect(densityFor("tiles", 5000)).toBe("tiles");
    expect(densityFor("compact", 1)).toBe("compact");
  });
  it("sizes tiles to the widest text any of them shows: a name, or a state beside its cores", () => {
    expect(tileWidthCh([node("a")])).toBe(Math.ceil("HEALTHY".length * 1.2) + 1 + "0/8".length);
    const unhealthy = tileWidthCh([node("a"), node("b", "UNHEALTHY", { cores: 32, used_cores: 32 })]);
    expect(unhealthy).toBe(Math.ceil("UNHEALTHY".length * 1.2) + 1 + "32/32".length);
    expect(tileWidthCh([node("rack12-node-0001-long")])).toBe("rack12-node-0001-long".length + 2);
    expect(tileWidthCh([node("n".repeat(200))])).toBe(longestName + 2);
  });
});

describe("node map summary", () => {
  const nodes = [
    ...Array.from({ length: 120 }, (_, i) => node(`h${i}`, "HEALTHY", { used_cores: 4 })),
    node("d1", "DRAINED"), node("d2", "DRAINED"), node("d3", "DRAINED"), node("x", "DOWN"),
  ];
  it("counts every state, leaving out those with none", () => {
    expect(nodeSummary(nodes)).toBe("124 nodes: 120 healthy, 3 drained, 1 down");
    expect(nodeSummary([node("a")])).toBe("1 node: 1 healthy");
    expect(nodeSummary([])).toBe("0 nodes");
    expect(stateCounts(nodes)).toEqual({ HEALTHY: 120, SUSPECT: 0, UNHEALTHY: 0, DRAINED: 3, DOWN: 1 });
  });
  it("sums the cores in use", () => {
    expect(coreSummary(nodes)).toBe("480 of 992 cores in use (48 %)");
    expect(coreSummary([])).toBe("0 of 0 cores in use (0 %)");
  });
  it("gives each node's use of its cores from 0 to 1", () => {
    expect(utilisation(node("a", "HEALTHY", { used_cores: 6 }))).toBe(0.75);
    expect(utilisation(node("a", "HEALTHY", { cores: 0, used_cores: 0 }))).toBe(0);
    expect(utilisation(node("a", "HEALTHY", { used_cores: 12 }))).toBe(1);
  });
  it("calls every state but HEALTHY one to look at", () => {
    expect(isBadState("HEALTHY")).toBe(false);
    expect(["SUSPECT", "UNHEALTHY", "DRAINED", "DOWN"].every((s) => isBadState(s as NodeState))).toBe(true);
  });
  it("groups by rack in natural order, nodes without one last", () => {
    const groups = groupByRack([node("a", "HEALTHY", { labels: { rack: "r10" } }), node("b", "HEALTHY", { labels: { rack: "r2" } }),
      node("c"), node("d", "HEALTHY", { labels: { rack: "r2" } })]);
    expect(groups.map(([rack, members]) => [rack, members.map((n) => n.name)]))
      .toEqual([["no rack", ["c"]], ["r2", ["b", "d"]], ["r10", ["a"]]]);
  });
});

describe("a node's jobs", () => {
  it("read a job as the node names it, a plain job or an array task, and nothing else", () => {
    expect(parseJobRef("12")).toEqual({ id: 12 });
    expect(parseJobRef("9_3")).toEqual({ id: 9, array: { job_id: 9, task_id: 3 } });
    for (const text of ["", "9_", "_3", "9_[0-2]", "12a", "-1"]) expect(parseJobRef(text)).toBeUndefined();
  });
  it("link each job once, in the node's order, a task by its ID_N", () => {
    expect(nodeJobs(node("a", "HEALTHY", { attempts: [50, 70, 51], jobs: ["12", "9_3", "12"] }))).toEqual({
      jobs: [{ label: "12", path: "/jobs/12" }, { label: "9_3", path: "/jobs/9_3" }], unknown: 0,
    });
    expect(nodeJobs(node("a", "HEALTHY", { attempts: [1], jobs: ["x/y"] })).jobs).toEqual([{ label: "x/y", path: "/jobs/x%2Fy" }]);
  });
  it("count the attempts it names no job for", () => {
    expect(nodeJobs(node("a", "HEALTHY", { attempts: [50, 51], jobs: ["12"] })).unknown).toBe(1);
    expect(nodeJobs(node("a", "HEALTHY", { attempts: [50] }))).toEqual({ jobs: [], unknown: 1 });
    expect(nodeJobs(node("a"))).toEqual({ jobs: [], unknown: 0 });
  });
});

describe("compact times", () => {
  it("are ISO-like and 24-hour in the given zone", () => {
    const iso = "2026-11-28T22:41:07.5Z";
    expect(localTime(iso, "Europe/Berlin")).toBe("2026-11-28 23:41:07");
    expect(localTime(iso, "UTC")).toBe("2026-11-28 22:41:07");
    expect(localTime("2026-11-28T00:00:09Z", "UTC")).toBe("2026-11-28 00:00:09");
    expect(localTime("2026-11-28T13:05:00Z", "America/New_York")).toBe("2026-11-28 08:05:00");
    expect(localTime("not a time")).toBe("not a time");
  });
  it("name the zone once with its offset", () => {
    expect(timeZoneLabel(new Date("2026-11-28T12:00:00Z"), "Europe/Berlin")).toBe("Europe/Berlin (UTC+01:00)");
    expect(timeZoneLabel(new Date("2026-07-01T12:00:00Z"), "Europe/Berlin")).toBe("Europe/Berlin (UTC+02:00)");
    expect(timeZoneLabel(new Date("2026-11-28T12:00:00Z"), "Asia/Kolkata")).toBe("Asia/Kolkata (UTC+05:30)");
    expect(timeZoneLabel(new Date("2026-11-28T12:00:00Z"), "America/New_York")).toBe("America/New_York (UTC-05:00)");
    expect(timeZoneLabel(new Date("2026-11-28T12:00:00Z"), "UTC")).toBe("UTC");
  });
});

describe("chart series", () => {
  const s = (mean: (number | null)[], min = mean, max = mean) => ({ x: mean.map((_, i) => i + 1), mean, min, max });
  it("with no values draw nothing, and say so", () => {
    expect(hasValues(s([]))).toBe(false);
    expect(hasValues(s([null, null]))).toBe(false);
    expect(hasValues(s([null, 2]))).toBe(true);
  });
  it("take a log scale only when every value is above zero", () => {
    expect(logScaleFits(s([2.3, 1.1, null, 0.4]))).toBe(true);
    expect(logScaleFits(s([2.3, 0]))).toBe(false);
    expect(logScaleFits(s([2.3, 1], [-1, 0.5], [3, 2]))).toBe(false);
    expect(logScaleFits(s([null]))).toBe(false);
  });
  it("list min and max only when they differ from the mean", () => {
    expect(hasBand(s([1, 2]))).toBe(false);
    expect(hasBand(s([1, 2], [0.5, 2], [1.5, 2]))).toBe(true);
  });
});
