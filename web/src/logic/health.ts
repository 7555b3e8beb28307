// One node's health record (GET /v1/nodes/{name}/health) as the node page shows it: the verdict,
// the tests that failed with their values, and busbw per collective.
import type { NodeHealthRecord } from "./types";

export interface HealthSummary {
  verdict: string;
  reason: string;
  tests: number;
  failed: string[];  // "core 3 gemm failed: measured 0.5 (limit 0.001)"
  busbw: Record<string, number>;  // best exact busbw per collective kind, bytes per second
}

// Three significant digits: enough to compare a value with its limit.
const figure = (x: number) => String(Number(x.toPrecision(3)));

export function summarizeHealth(record: NodeHealthRecord): HealthSummary {
  const summary: HealthSummary = { verdict: record.verdict, reason: record.reason || record.error || "", tests: 0, failed: [], busbw: {} };
  for (const core of record.accelerator?.cores ?? []) {
    for (const check of core.checks) {
      summary.tests++;
      if (check.status === "passed") continue;
      summary.failed.push(`core ${core.core} ${check.test} ${check.status}: measured ${figure(check.measured)} (limit ${figure(check.limit)})`);
    }
  }
  for (const run of record.collective) {
    // A suite that stopped part-way (a peer's transport failed) ran fewer collectives than it meant
    // to: why is the rank's own error, not any one collective's.
    if (run.result.error) {
      const peer = run.result.failed_peer === undefined ? "" : ` (rank ${run.result.failed_peer} failed)`;
      summary.failed.push(`collective suite with ${run.nodes.join(", ")} stopped: ${run.result.error}${peer}`);
    }
    for (const c of run.result.collectives) {
      summary.tests++;
      if (c.error) summary.failed.push(`${c.kind} with ${run.nodes.join(", ")}: ${c.error}`);
      // Only an exact result's busbw counts, as in the daemon's own figures (healthcheck/run_figures.cpp):
      // the time of a wrong result says nothing of the link.
      if (c.exact && !c.error && c.busbw > (summary.busbw[c.kind] ?? -1)) summary.busbw[c.kind] = c.busbw;
    }
  }
  return summary;
}
