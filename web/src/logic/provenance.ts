// An attempt's provenance (GET /v1/jobs/{id}/attempts/{n}/provenance) flattened to dotted fields,
// so that two attempts can be compared field by field: what changed between the run that worked
// and the one that did not.
import type { Provenance } from "./types";

// Fields that differ between any two attempts by construction.
const identity = new Set(["attempt", "attempt_id"]);

export function flatten(value: unknown, prefix = "", out: Map<string, string> = new Map()): Map<string, string> {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v] as const)
      : Object.entries(value).map(([k, v]) => [prefix ? `.${k}` : k, v] as const);
    if (entries.length === 0) out.set(prefix, Array.isArray(value) ? "[]" : "{}");
    for (const [k, v] of entries) flatten(v, prefix + k, out);
    return out;
  }
  out.set(prefix, value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value));
  return out;
}

export interface Difference { field: string; left?: string; right?: string }

// The fields whose values differ (missing on one side counts), in field order.
export function compareProvenance(left: Provenance, right: Provenance): Difference[] {
  const a = flatten(left);
  const b = flatten(right);
  const fields = [...new Set([...a.keys(), ...b.keys()])].filter((f) => !identity.has(f.split(/[.[]/)[0])).sort();
  return fields.filter((f) => a.get(f) !== b.get(f)).map((f) => ({ field: f, left: a.get(f), right: b.get(f) }));
}
