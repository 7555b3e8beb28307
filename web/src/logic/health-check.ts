// Starting a health check from the Health page: the body of POST /v1/healthchecks (the
// "HealthCheckRequest" schema, checked by daemon/api/health.cpp) built from the form's choices, the
// mistakes the API would refuse said before sending, and the bounded wait for the check to finish.
import type { HealthCheck, HealthCheckRequest, Node, Suite } from "./types";

export const allSuites: Suite[] = ["accelerator", "collective"];
export const maxNodes = 1024;  // the API's limit on `nodes`

export interface CheckChoice {
  allNodes: boolean;
  picked: string[];  // when not allNodes
  suites: Suite[];
}

// The API refuses a node that is not connected, so "all nodes" means every connected one.
export function checkableNodes(nodes: Node[]): string[] {
  return nodes.filter((n) => n.connected).map((n) => n.name);
}

// The request, or why the API would refuse it. Nodes keep the list's order and each appears once
// (the API refuses a name given twice); suites keep the API's order.
export function checkRequest(choice: CheckChoice, nodes: Node[]): { request: HealthCheckRequest } | { problem: string } {
  const connected = checkableNodes(nodes);
  const names = choice.allNodes ? connected : connected.filter((name) => choice.picked.includes(name));
  const chosenSuites = allSuites.filter((s) => choice.suites.includes(s));
  if (names.length === 0) return { problem: choice.allNodes ? "No node is connected to check." : "Pick at least one node." };
  if (names.length > maxNodes) return { problem: `A check takes at most ${maxNodes} nodes; pick fewer.` };
  if (chosenSuites.length === 0) return { problem: "Pick at least one suite." };
  if (chosenSuites.length === 1 && chosenSuites[0] === "collective" && names.length < 2) {
    return { problem: "The collective suite needs at least 2 nodes." };
  }
  return { request: { nodes: names, suites: chosenSuites } };
}

// The picked names after a checkbox changed.
export function togglePick<T extends string>(picked: T[], item: T, on: boolean): T[] {
  const rest = picked.filter((p) => p !== item);
  return on ? [...rest, item] : rest;
}

export type WaitOutcome = "listed" | "not yet" | "stopped";

// Asks `listed` up to `tries` times, `intervalMs` apart, whether the started check is in GET
// /v1/healthchecks yet (the list holds finished checks only). A failed ask counts as a try: the
// page's own refresh still shows the check later. `stopped`: the page went away or started another.
export async function waitUntilListed(listed: () => Promise<boolean>, options: {
  tries: number; intervalMs: number; stopped: () => boolean; sleep?: (ms: number) => Promise<void>;
}): Promise<WaitOutcome> {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let i = 0; i < options.tries; i++) {
    if (i > 0) await sleep(options.intervalMs);
    if (options.stopped()) return "stopped";
    const found = await listed().catch(() => false);
    if (options.stopped()) return "stopped";
    if (found) return "listed";
  }
  return "not yet";
}

// The check the Health page opens on (`checks` newest first): the newest that matters, one that
// failed or judged a node other than HEALTHY, or one that compared pairs (its matrix); else the newest.
export function checkToShow(checks: HealthCheck[]): HealthCheck | undefined {
  const matters = (c: HealthCheck) =>
    c.state === "FAILED" || c.verdicts.some((v) => v.state !== "HEALTHY") || c.localisation !== undefined;
  return checks.find(matters) ?? checks[0];
}
