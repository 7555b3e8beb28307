// The node map (/nodes): its filters as a URL query string, the counts it summarises, each node's
// use of its cores, and which jobs run on it (GET /v1/nodes names them in each node's `jobs`).
import { cores, count, jobLabel, jobPath } from "./format";
import type { Node, NodeState } from "./types";

// Worst last, as the summary reads them.
export const nodeStates: NodeState[] = ["HEALTHY", "SUSPECT", "UNHEALTHY", "DRAINED", "DOWN"];

// A state that needs someone to look: its reason is shown with it.
export function isBadState(state: NodeState): boolean {
  return state !== "HEALTHY";
}

// How the map draws its nodes: tiles with their facts written on them, or compact cells (colour
// and use only, the same facts on hover or focus) that put a thousand nodes on one screen. "auto"
// draws tiles up to `compactAbove` nodes shown.
export type NodeDensity = "auto" | "tiles" | "compact";
export const nodeDensities: NodeDensity[] = ["auto", "tiles", "compact"];

export interface NodeFilter {
  states: NodeState[];   // none: every state
  name: string;          // a part of the name, any case
  grouped: boolean;      // by rack (the default) or one grid
  density: NodeDensity;  // "auto" unless chosen
}

export const emptyNodeFilter: NodeFilter = { states: [], name: "", grouped: true, density: "auto" };

// About as many tiles as a 1440 x 900 screen holds; past it the map turns compact unless told.
export const compactAbove = 200;

export function densityFor(density: NodeDensity, shown: number): "tiles" | "compact" {
  if (density !== "auto") return density;
  return shown > compactAbove ? "compact" : "tiles";
}

// The width of a tile that shows every tile's text whole, in `ch` of the tile's font: the longest
// name (with room for the fault flag), or the state beside its cores ("UNHEALTHY 32/32"; capitals
// are wider than a `ch`, hence the margin). Names past `longestName` are cut with an ellipsis and
// read whole in the details.
export const longestName = 32;
export function tileWidthCh(nodes: Pick<Node, "name" | "state" | "cores" | "used_cores">[]): number {
  let widest = 8;
  for (const n of nodes) {
    const line = Math.ceil(n.state.length * 1.2) + 1 + `${n.used_cores ?? 0}/${n.cores}`.length;
    widest = Math.max(widest, Math.min(longestName, n.name.length) + 2, line);
  }
  return widest;
}

// "?state=UNHEALTHY,DOWN&name=trn&group=none", with or without "?". Unknown states are dropped.
export function nodeFilterFromQuery(search: string): NodeFilter {
  const q = new URLSearchParams(search);
  const asked = (q.get("state") ?? "").split(",").map((s) => s.trim().toUpperCase());
  return {
    states: nodeStates.filter((s) => asked.includes(s)),
    name: q.get("name") ?? "",
    grouped: q.get("group") !== "none",
    density: nodeDensities.find((d) => d !== "auto" && d === q.get("density")) ?? "auto",
  };
}

// The dashboard URL of a filter, defaults left out: the plain map is "/nodes".
export function nodesPath(f: NodeFilter): string {
  const q = new URLSearchParams();
  if (f.states.length) q.set("state", f.states.join(","));
  if (f.name) q.set("name", f.name);
  if (!f.grouped) q.set("group", "none");
  if (f.density !== "auto") q.set("density", f.density);
  const text = q.toString().replace(/%2C/g, ",");
  return text ? `/nodes?${text}` : "/nodes";
}

export function filterNodes<T extends Pick<Node, "name" | "state">>(nodes: T[], f: NodeFilter): T[] {
  const part = f.name.trim().toLowerCase();
  return nodes.filter((n) => (f.states.length === 0 || f.states.includes(n.state))
    && (part === "" || n.name.toLowerCase().includes(part)));
}

export function stateCounts(nodes: Pick<Node, "state">[]): Record<NodeState, number> {
  const counts = Object.fromEntries(nodeStates.map((s) => [s, 0])) as Record<NodeState, number>;
  for (const n of nodes) counts[n.state] = (counts[n.state] ?? 0) + 1;
  return counts;
}

// "128 nodes: 120 healthy, 3 drained, 5 down" (states with none left out).
export function nodeSummary(nodes: Pick<Node, "state">[]): string {
  const counts = stateCounts(nodes);
  const parts = Object.entries(counts).filter(([, n]) => n > 0).map(([s, n]) => `${n} ${s.toLowerCase()}`);
  return `${count(nodes.length, "node")}${parts.length ? `: ${parts.join(", ")}` : ""}`;
}

// Cores in use against the node's total, 0 to 1.
export function utilisation(n: Pick<Node, "cores" | "used_cores">): number {
  if (!(n.cores > 0)) return 0;
  return Math.min(1, Math.max(0, (n.used_cores ?? 0) / n.cores));
}

// "412 of 1,024 cores in use (40 %)" over a set of nodes.
export function coreSummary(nodes: Pick<Node, "cores" | "used_cores">[]): string {
  const total = nodes.reduce((s, n) => s + (n.cores ?? 0), 0);
  const used = nodes.reduce((s, n) => s + (n.used_cores ?? 0), 0);
  const pct = total > 0 ? Math.round((used / total) * 100) : 0;
  return `${used.toLocaleString("en-US")} of ${cores(total)} in use (${pct} %)`;
}

// The daemon's default --placement-label; nodes without it are grouped under "no rack".
export const placementLabel = "rack";

export function groupByRack<T extends Pick<Node, "labels">>(nodes: T[]): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const node of nodes) {
    const rack = node.labels?.[placementLabel] ?? "no rack";
    const members = groups.get(rack);
    if (members) members.push(node);
    else groups.set(rack, [node]);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }));
}

// A job as a node names it: its label as the CLI writes it ("12", "9_3") and its page.
export interface NodeJob { label: string; path: string }

// "12" or an array task "9_3" (as GET /v1/nodes names jobs) as jobLabel and jobPath read a job;
// undefined for any other text.
export function parseJobRef(text: string): { id: number; array?: { job_id: number; task_id: number } } | undefined {
  const m = /^(\d+)(?:_(\d+))?$/.exec(text);
  if (!m) return undefined;
  const id = Number(m[1]);
  return m[2] === undefined ? { id } : { id, array: { job_id: id, task_id: Number(m[2]) } };
}

// A node's jobs, each once, in the order of its attempts; `unknown`: its attempts shown without a
// job (the daemon names none for an attempt whose job it no longer holds, an older one names none).
export function nodeJobs(n: Pick<Node, "attempts" | "jobs">): { jobs: NodeJob[]; unknown: number } {
  const jobs: NodeJob[] = [];
  const seen = new Set<string>();
  for (const text of n.jobs ?? []) {
    if (seen.has(text)) continue;
    seen.add(text);
    const ref = parseJobRef(text);
    jobs.push(ref ? { label: jobLabel(ref), path: jobPath(ref) } : { label: text, path: `/jobs/${encodeURIComponent(text)}` });
  }
  return { jobs, unknown: Math.max(0, (n.attempts?.length ?? 0) - (n.jobs?.length ?? 0)) };
}
