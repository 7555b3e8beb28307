import { describe, expect, it } from "vitest";
import { checkableNodes, checkRequest, checkToShow, maxNodes, togglePick, waitUntilListed, type CheckChoice } from "./health-check";
import type { HealthCheck, Node } from "./types";

const node = (name: string, connected = true): Node => ({
  name, cores: 8, free_cores: 8, used_cores: 0, state: connected ? "HEALTHY" : "DOWN", connected, attempts: [], jobs: [],
});
const nodes = [node("trn-1"), node("trn-2"), node("trn-3", false), node("trn-4")];
const choice = (over: Partial<CheckChoice> = {}): CheckChoice =>
  ({ allNodes: true, picked: [], suites: ["accelerator", "collective"], ...over });

describe("the health check request", () => {
  it("checks every connected node with both suites by default", () => {
    expect(checkableNodes(nodes)).toEqual(["trn-1", "trn-2", "trn-4"]);
    expect(checkRequest(choice(), nodes)).toEqual({
      request: { nodes: ["trn-1", "trn-2", "trn-4"], suites: ["accelerator", "collective"] },
    });
  });

  it("sends the picked nodes in the list's order, once each, and leaves out ones not connected", () => {
    const picked = ["trn-4", "trn-3", "trn-1", "trn-4", "gone"];
    expect(checkRequest(choice({ allNodes: false, picked }), nodes)).toEqual({
      request: { nodes: ["trn-1", "trn-4"], suites: ["accelerator", "collective"] },
    });
  });

  it("ignores the picks while all nodes are chosen", () => {
    expect(checkRequest(choice({ picked: ["trn-2"] }), nodes)).toMatchObject({ request: { nodes: ["trn-1", "trn-2", "trn-4"] } });
  });

  it("sends the chosen suites in the API's order", () => {
    expect(checkRequest(choice({ suites: ["collective", "accelerator"] }), nodes))
      .toMatchObject({ request: { suites: ["accelerator", "collective"] } });
    expect(checkRequest(choice({ allNodes: false, picked: ["trn-2"], suites: ["accelerator"] }), nodes))
      .toEqual({ request: { nodes: ["trn-2"], suites: ["accelerator"] } });
  });

  it("asks for at least one node", () => {
    expect(checkRequest(choice({ allNodes: false }), nodes)).toEqual({ problem: "Pick at least one node." });
    expect(checkRequest(choice({ allNodes: false, picked: ["trn-3"] }), nodes)).toEqual({ problem: "Pick at least one node." });
    expect(checkRequest(choice(), [node("trn-3", false)])).toEqual({ problem: "No node is connected to check." });
  });

  it("asks for at least one suite", () => {
    expect(checkRequest(choice({ suites: [] }), nodes)).toEqual({ problem: "Pick at least one suite." });
  });

  it("needs two nodes for the collective suite alone, not with the accelerator suite", () => {
    const one = { allNodes: false, picked: ["trn-1"] };
    expect(checkRequest(choice({ ...one, suites: ["collective"] }), nodes))
      .toEqual({ problem: "The collective suite needs at least 2 nodes." });
    expect(checkRequest(choice(one), nodes)).toMatchObject({ request: { nodes: ["trn-1"] } });
    expect(checkRequest(choice({ allNodes: false, picked: ["trn-1", "trn-2"], suites: ["collective"] }), nodes))
      .toEqual({ request: { nodes: ["trn-1", "trn-2"], suites: ["collective"] } });
  });

  it("keeps to the API's limit of nodes", () => {
    const many = Array.from({ length: maxNodes + 1 }, (_, i) => node(`n-${i}`));
    expect(checkRequest(choice(), many)).toEqual({ problem: "A check takes at most 1024 nodes; pick fewer." });
    expect(checkRequest(choice(), many.slice(0, maxNodes))).toMatchObject({ request: { suites: ["accelerator", "collective"] } });
  });

  it("ticks and unticks a pick", () => {
    expect(togglePick(["a"], "b", true)).toEqual(["a", "b"]);
    expect(togglePick(["a", "b"], "b", true)).toEqual(["a", "b"]);
    expect(togglePick(["a", "b"], "a", false)).toEqual(["b"]);
  });
});

describe("waiting for the started check to be listed", () => {
  const noSleep = async () => undefined;

  it("stops asking once the check is listed", async () => {
    let asked = 0;
    const outcome = await waitUntilListed(async () => ++asked === 3,
      { tries: 10, intervalMs: 1000, stopped: () => false, sleep: noSleep });
    expect(outcome).toBe("listed");
    expect(asked).toBe(3);
  });

  it("gives up after its tries, waiting between them and counting failed asks", async () => {
    let asked = 0;
    const waits: number[] = [];
    const outcome = await waitUntilListed(async () => {
      asked++;
      if (asked === 2) throw new Error("the daemon cannot be reached");
      return false;
    }, { tries: 4, intervalMs: 2500, stopped: () => false, sleep: async (ms) => void waits.push(ms) });
    expect(outcome).toBe("not yet");
    expect(asked).toBe(4);
    expect(waits).toEqual([2500, 2500, 2500]);
  });

  it("stops when the page no longer wants the answer", async () => {
    let asked = 0;
    let stop = false;
    const outcome = await waitUntilListed(async () => {
      asked++;
      stop = true;
      return false;
    }, { tries: 10, intervalMs: 1000, stopped: () => stop, sleep: noSleep });
    expect(outcome).toBe("stopped");
    expect(asked).toBe(1);
  });
});

describe("the check the Health page opens on", () => {
  const check = (id: number, over: Partial<HealthCheck> = {}): HealthCheck => ({
    id, kind: "periodic", nodes: ["n1", "n2"], suites: ["accelerator"], requested_by: "daemon", state: "PASSED",
    created_at: "2026-11-24T21:00:00Z", accelerator: {}, errors: {}, collective_runs: [],
    verdicts: [{ node: "n1", state: "HEALTHY", reason: "" }, { node: "n2", state: "HEALTHY", reason: "" }], ...over,
  } as HealthCheck);
  const pairs = { reference_busbw: {}, suspect_fraction: 0.5, tests: [] } as unknown as HealthCheck["localisation"];

  it("is the newest check that found a node unhealthy, not an older one with a matrix", () => {
    const bad = check(20, { state: "FAILED", verdicts: [{ node: "n2", state: "UNHEALTHY", reason: "hbm" }] });
    expect(checkToShow([check(21), bad, check(11, { localisation: pairs })])?.id).toBe(20);
  });

  it("is the newest that compared pairs when all were healthy, else the newest", () => {
    expect(checkToShow([check(21), check(11, { localisation: pairs })])?.id).toBe(11);
    expect(checkToShow([check(21), check(20)])?.id).toBe(21);
    expect(checkToShow([])).toBeUndefined();
  });
});
