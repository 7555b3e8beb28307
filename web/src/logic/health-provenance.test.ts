import { describe, expect, it } from "vitest";
import { busbwAgainstReference, cellLabel, pairGroups, pairMatrix, worstRatio } from "./health-matrix";
import { compareProvenance, flatten } from "./provenance";
import type { HealthCheck, PairTest, Provenance } from "./types";

const MB = 1e6;
const pair = (a: string, b: string, outcome: PairTest["outcome"], mbps: number | null): PairTest => ({
  nodes: [a, b], outcome, why: outcome === "passed" ? "" : `${outcome} test`,
  busbw: mbps === null ? {} : { all_reduce: mbps * MB, all_gather: mbps * MB },
});
const measured = (kind: "all_reduce" | "all_gather", mbps: number, exact: boolean) => ({
  kind, exact, bytes: 4 * MB, seconds: 4 / mbps, busbw: mbps * MB, error: exact ? "" : "wrong result",
});
const run = (nodes: string[], ranks: { mbps: number; exact?: boolean }[]): HealthCheck["collective_runs"][number] => ({
  nodes,
  ranks: ranks.map(({ mbps, exact = true }, i) => ({
    rank: i, world_size: nodes.length, error: "",
    collectives: [measured("all_reduce", mbps, exact), measured("all_gather", mbps, exact)],
  })),
});

// Node c is slow: every pair with it runs at 2 MB/s against 100.
const check: HealthCheck = {
  id: 9, kind: "on_demand", state: "FAILED", nodes: ["a", "b", "c"], created_at: "2026-11-24T21:00:00Z",
  suites: ["collective"], requested_by: "ops", accelerator: {}, errors: {},
  verdicts: [{ node: "c", state: "SUSPECT", reason: "localised" }],
  collective_runs: [run(["a", "b", "c"], [{ mbps: 2 }, { mbps: 2 }, { mbps: 2 }])],
  localisation: {
    reference_busbw: { all_reduce: 100 * MB, all_gather: 100 * MB }, suspect_fraction: 0.5,
    tests: [pair("a", "c", "slow", 2), pair("b", "a", "passed", 100), pair("c", "b", "slow", 2)],
  },
};

describe("pair matrix", () => {
  it("puts each pair in both of its cells and names the bad pairs", () => {
    const m = pairMatrix(check)!;
    expect(m.nodes).toEqual(["a", "b", "c"]);
    expect(m.cell("a", "b")).toEqual(m.cell("b", "a"));
    expect(m.cell("a", "b")!.outcome).toBe("passed");
    expect(m.cell("c", "a")!.outcome).toBe("slow");
    expect(m.cell("a", "a")).toBeUndefined();
    expect(m.bad).toEqual([["a", "c"], ["c", "b"]]);
  });
  it("labels cells in words, not only colour", () => {
    const m = pairMatrix(check)!;
    expect(cellLabel(m.cell("a", "b")!)).toBe("ok 100 %");
    expect(cellLabel(m.cell("a", "c")!)).toBe("slow 2 %");
    expect(cellLabel({ outcome: "failed", worstRatio: null, why: "wrong result" })).toBe("failed");
  });
  it("has no matrix without pair tests", () => {
    expect(pairMatrix({ ...check, localisation: undefined })).toBeNull();
    expect(pairGroups({ ...check, localisation: undefined })).toEqual([]);
  });
  it("shows one small matrix per group the daemon compared, not one grid of every node", () => {
    expect(pairGroups(check).map((g) => g.nodes)).toEqual([["a", "b", "c"]]);
    // 40 nodes compared in pairs within groups of 4 (as the daemon groups them): 10 matrices of 4.
    const nodes = Array.from({ length: 40 }, (_, i) => `n${String(i).padStart(2, "0")}`);
    const tests: PairTest[] = [];
    for (let g = 0; g < 40; g += 4) {
      for (let i = g; i < g + 4; i++) {
        for (let j = i + 1; j < g + 4; j++) tests.push(pair(nodes[i], nodes[j], i === 5 && j === 6 ? "failed" : "passed", 100));
      }
    }
    const groups = pairGroups({ ...check, nodes, collective_runs: [], localisation: { ...check.localisation!, tests } });
    expect(groups).toHaveLength(10);
    expect(groups[1].nodes).toEqual(["n04", "n05", "n06", "n07"]);
    expect(groups[1].bad).toEqual([["n05", "n06"]]);
    expect(groups[0].bad).toEqual([]);
    expect(groups[1].cell("n05", "n06")!.outcome).toBe("failed");
    expect(groups.every((g) => g.nodes.length === 4)).toBe(true);
  });
  it("takes the worst collective's ratio, skipping those without a figure", () => {
    expect(worstRatio({ all_reduce: 50, all_gather: 80 }, { all_reduce: 100, all_gather: 100 })).toBe(0.5);
    expect(worstRatio({ all_gather: 80 }, { all_reduce: 100, all_gather: 100 })).toBe(0.8);
    expect(worstRatio({}, { all_reduce: 100 })).toBeNull();
  });
});

describe("busbw against the reference", () => {
  it("lists the whole run and each pair per collective with the ratio", () => {
    const rows = busbwAgainstReference(check);
    expect(rows).toHaveLength(2 + 3 * 2);
    expect(rows[0]).toEqual({ test: "all 3 nodes", kind: "all_reduce", busbw: 2 * MB, reference: 100 * MB, ratio: 0.02, outcome: "slow" });
    expect(rows.find((r) => r.test === "b + a" && r.kind === "all_gather")!.ratio).toBe(1);
  });
  it("gives a run with an inexact rank no figure, and calls it failed", () => {
    const broken = { ...check, collective_runs: [run(["a", "b", "c"], [{ mbps: 100 }, { mbps: 100, exact: false }, { mbps: 100 }])] };
    expect(busbwAgainstReference(broken)[0]).toMatchObject({ busbw: null, ratio: null, outcome: "failed" });
  });
});

describe("provenance", () => {
  const first: Provenance = {
    job: 4, attempt: 1, attempt_id: 10, spec: { name: "train" }, spec_sha256: "abc", daemon: { version: "1.2.0", commit: "" },
    ranks: [{ rank: 0, node: "n1", agent_version: "1.2.0", environment: { PATH: "/bin", TOKEN: "***" } },
      { rank: 1, node: "n2", agent_version: "1.2.0" }],
  };
  it("flattens nested records to dotted fields", () => {
    expect(flatten(first).get("ranks[0].environment.PATH")).toBe("/bin");
    expect(flatten({ a: [] }).get("a")).toBe("[]");
  });
  it("lists only what differs between two attempts, not their own numbers", () => {
    const second = { ...first, attempt: 2, attempt_id: 11, checkpoint: { path: "/ck/step-50", step: 50 },
      ranks: [{ rank: 0, node: "n3", agent_version: "1.2.0", environment: { PATH: "/bin", TOKEN: "***" } },
        { rank: 1, node: "n2", agent_version: "1.2.0" }] };
    expect(compareProvenance(first, second)).toEqual([
      { field: "checkpoint.path", left: undefined, right: "/ck/step-50" },
      { field: "checkpoint.step", left: undefined, right: "50" },
      { field: "ranks[0].node", left: "n1", right: "n3" },
    ]);
    expect(compareProvenance(first, first)).toEqual([]);
  });
});
