// The node map (/nodes): its filters as a URL query string, the counts it summarises, each node's
// use of its cores, and which jobs run on it. GET /v1/nodes gives each node its attempts' ids, not
// its jobs: the jobs come from the running jobs' own attempts (attemptIndex).
import { cores, count } from "./format";
import type { Attempt, Job, Node, NodeState } from "./types";

// Worst last, as the summary reads them.
export const nodeStates: NodeState[] = ["HEALTHY", "SUSPECT", "UNHEALTHY", "DRAINED", "DOWN"];

// A state that needs someone to look: its reason is shown with it.
export function isBadState(state: NodeState): boolean {
  return state !== "HEALTHY";
}

export interface NodeFilter {
  states: NodeState[];  // none: every state
  name: string;         // a part of the name, any case
  grouped: boolean;     // by rack (the default) or one grid
}

export const emptyNodeFilter: NodeFilter = { states: [], name: "", grouped: true };

// "?state=UNHEALTHY,DOWN&name=trn&group=none", with or without "?". Unknown states are dropped.
export function nodeFilterFromQuery(search: string): NodeFilter {
  const q = new URLSearchParams(search);
  const asked = (q.get("state") ?? "").split(",").map((s) => s.trim().toUpperCase());
  return {
    states: nodeStates.filter((s) => asked.includes(s)),
    name: q.get("name") ?? "",
    grouped: q.get("group") !== "none",
  };
}

// The dashboard URL of a filter, defaults left out: the plain map is "/nodes".
export function nodesPath(f: NodeFilter): string {
  const q = new URLSearchParams();
  if (f.states.length) q.set("state", f.states.join(","));
  if (f.name) q.set("name", f.name);
  if (!f.grouped) q.set("group", "none");
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

// What a node's tile says of a job: its id as the CLI names it and where its page is.
export type JobRef = Pick<Job, "id" | "name" | "user" | "state" | "array">;

// Attempt id -> its job, from jobs and their attempts (GET /v1/jobs/{id}/attempts).
export function attemptIndex(entries: { job: JobRef; attempts: Pick<Attempt, "id">[] }[]): Map<number, JobRef> {
  const index = new Map<number, JobRef>();
  for (const { job, attempts } of entries) for (const a of attempts) index.set(a.id, job);
  return index;
}

// A node's jobs, each once, in the order of its attempts; `unknown`: attempts not (yet) traced to a job.
export function nodeJobs(attempts: number[] | undefined, index: Map<number, JobRef>): { jobs: JobRef[]; unknown: number } {
  const jobs: JobRef[] = [];
  const seen = new Set<number>();
  let unknown = 0;
  for (const id of attempts ?? []) {
    const job = index.get(id);
    if (!job) unknown++;
    else if (!seen.has(job.id)) {
      seen.add(job.id);
      jobs.push(job);
    }
  }
  return { jobs, unknown };
}

// The jobs whose attempts are needed: a list of running jobs where an array is one folded row
// (its tasks listed separately) keeps only the jobs and tasks themselves. `key` changes when a
// job gains an attempt, so a cached answer is good until then.
export function attemptsKey(job: Pick<Job, "id" | "attempts">): string {
  return `${job.id}:${job.attempts ?? 0}`;
}

export function isFoldedArray(job: Pick<Job, "array">): boolean {
  return job.array !== undefined && job.array.task_id === undefined;
}
