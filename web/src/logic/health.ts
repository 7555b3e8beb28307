// One node's health record (GET /v1/nodes/{name}/health) as the node page shows it: the verdict,
// the tests that failed with their values, and busbw per collective.

interface TestCheck { test: string; status: string; measured: number | null; limit: number | null; reason?: string }
export interface HealthRecord {
  at: string; check_id?: number; kind?: string; verdict?: string; reason?: string; error?: string;
  accelerator?: { cores?: { core: number; checks: TestCheck[] }[] };
  collective?: { nodes: string[]; result: { collectives?: { kind: string; busbw: number | null; error?: string }[] } }[];
}

export interface HealthSummary {
  verdict: string;
  reason: string;
  tests: number;
  failed: string[];  // "core 3 gemm: measured 0.5 (limit 0.001)"
  busbw: Record<string, number>;  // best busbw per collective kind, GB/s
}

// Three significant digits: enough to compare a value with its limit.
const figure = (x: number) => String(Number(x.toPrecision(3)));

export function summarizeHealth(record: HealthRecord): HealthSummary {
  const summary: HealthSummary = { verdict: record.verdict ?? "—", reason: record.reason || record.error || "", tests: 0, failed: [], busbw: {} };
  for (const core of record.accelerator?.cores ?? []) {
    for (const check of core.checks) {
      summary.tests++;
      if (check.status === "passed") continue;
      const values = check.measured === null ? "" : `: measured ${figure(check.measured)}${check.limit === null ? "" : ` (limit ${figure(check.limit)})`}`;
      summary.failed.push(`core ${core.core} ${check.test} ${check.status}${values}`);
    }
  }
  for (const run of record.collective ?? []) {
    for (const c of run.result.collectives ?? []) {
      summary.tests++;
      if (c.error) summary.failed.push(`${c.kind} with ${run.nodes.join(", ")}: ${c.error}`);
      if (c.busbw !== null && c.busbw > (summary.busbw[c.kind] ?? -1)) summary.busbw[c.kind] = c.busbw;
    }
  }
  return summary;
}
