// A health check's pair tests (GET /v1/healthchecks/{id}'s `localisation`) as the health page
// shows them: node-by-node matrices whose cells say how the pair did, one per group of nodes the
// daemon compared (pairs are tested only within groups of --health-group-size, so a check of many
// nodes is many small matrices, never one N x N grid), and each test's busbw against the reference
// the daemon judged it by.
import type { HealthCheck, Localisation, PairTest } from "./types";

export type Outcome = PairTest["outcome"];
// What the matrix and the busbw table read of a check.
export type PairTests = Pick<HealthCheck, "nodes" | "collective_runs" | "localisation">;

export interface MatrixCell { outcome: Outcome; worstRatio: number | null; why: string }
export interface PairMatrix {
  nodes: string[];                 // rows and columns, in the check's order
  cell(a: string, b: string): MatrixCell | undefined;  // undefined on the diagonal and for untested pairs
  bad: string[][];                 // the pairs that were slow or failed, as [a, b]
}

// The lowest of a test's busbw / reference over the collectives the reference has.
export function worstRatio(busbw: Record<string, number>, reference: Record<string, number>): number | null {
  let worst: number | null = null;
  for (const [kind, ref] of Object.entries(reference)) {
    if (!(ref > 0) || busbw[kind] === undefined) continue;
    const r = busbw[kind] / ref;
    if (worst === null || r < worst) worst = r;
  }
  return worst;
}

export function pairMatrix(check: PairTests): PairMatrix | null {
  const loc = check.localisation;
  if (!loc) return null;
  const cells = new Map<string, MatrixCell>();
  const key = (a: string, b: string) => (a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`);
  const bad: string[][] = [];
  for (const t of loc.tests) {
    if (t.nodes.length !== 2) continue;  // the matrix shows pairs; other sets are in the table
    const [a, b] = t.nodes;
    cells.set(key(a, b), { outcome: t.outcome, worstRatio: worstRatio(t.busbw, loc.reference_busbw), why: t.why });
    if (t.outcome !== "passed") bad.push([a, b]);
  }
  const nodes = check.collective_runs[0]?.nodes ?? check.nodes;
  return { nodes, bad, cell: (a, b) => (a === b ? undefined : cells.get(key(a, b))) };
}

// The matrix cut into the groups whose nodes were compared with each other (the connected parts of
// the pair tests), each with its nodes in the check's order; nodes in no pair test are left out.
export function pairGroups(check: PairTests): PairMatrix[] {
  const whole = pairMatrix(check);
  if (!whole || !check.localisation) return [];
  const parent = new Map<string, string>();
  const root = (n: string): string => {
    let r = n;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(n, r);
    return r;
  };
  for (const t of check.localisation.tests) {
    if (t.nodes.length !== 2) continue;
    for (const n of t.nodes) if (!parent.has(n)) parent.set(n, n);
    parent.set(root(t.nodes[0]), root(t.nodes[1]));
  }
  const groups = new Map<string, string[]>();
  const order = [...whole.nodes, ...[...parent.keys()].filter((n) => !whole.nodes.includes(n))];
  for (const n of order) {
    if (!parent.has(n)) continue;
    const r = root(n);
    if (!groups.has(r)) groups.set(r, []);
    if (!groups.get(r)!.includes(n)) groups.get(r)!.push(n);
  }
  return [...groups.values()].map((nodes) => {
    const members = new Set(nodes);
    return { nodes, cell: whole.cell, bad: whole.bad.filter(([a]) => members.has(a)) };
  });
}

// What a cell says in words (colour is never the only signal): "ok 98 %", "slow 3 %", "failed".
export function cellLabel(cell: MatrixCell): string {
  if (cell.outcome === "failed") return "failed";
  const pct = cell.worstRatio === null ? "" : ` ${Math.round(cell.worstRatio * 100)} %`;
  return `${cell.outcome === "passed" ? "ok" : "slow"}${pct}`;
}

export interface BusbwRow { test: string; kind: string; busbw: number | null; reference: number; ratio: number | null; outcome: Outcome }

// Every test (the whole set's run, then each pair) per collective, against the reference.
export function busbwAgainstReference(check: PairTests): BusbwRow[] {
  const loc = check.localisation;
  if (!loc) return [];
  const rows: BusbwRow[] = [];
  const whole = check.collective_runs[0];
  if (whole) {
    for (const kind of Object.keys(loc.reference_busbw)) {
      // The run is as fast as its slowest rank, and has no figure if a rank's result was not exact.
      const figures = whole.ranks.map((r) => r.collectives.find((c) => c.kind === kind && c.exact)?.busbw);
      const busbw = figures.every((f) => f !== undefined) && figures.length ? Math.min(...(figures as number[])) : null;
      const failed = busbw === null;
      rows.push(row(`all ${whole.nodes.length} nodes`, kind, busbw, loc, failed));
    }
  }
  for (const t of loc.tests) {
    for (const kind of Object.keys(loc.reference_busbw)) {
      rows.push(row(t.nodes.join(" + "), kind, t.busbw[kind] ?? null, loc, t.outcome === "failed"));
    }
  }
  return rows;
}

function row(test: string, kind: string, busbw: number | null, loc: Localisation, failed: boolean): BusbwRow {
  const reference = loc.reference_busbw[kind];
  const ratio = busbw === null || !(reference > 0) ? null : busbw / reference;
  const outcome: Outcome = failed ? "failed" : ratio !== null && ratio < loc.suspect_fraction ? "slow" : "passed";
  return { test, kind, busbw, reference, ratio, outcome };
}
