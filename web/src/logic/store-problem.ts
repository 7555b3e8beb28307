// The daemon's store refusing writes (GET /v1/cluster's store_problem, issue 53) as the banner every
// page shows while it lasts: what the reader can still do (read) and what is refused (every change),
// since when, and the store's own words. No banner while the store writes.
import { localTime, since } from "./format";
import type { ClusterStatus } from "./types";

export function storeProblemBanner(cluster: ClusterStatus | undefined, now: Date): string | undefined {
  const problem = cluster?.store_problem;
  if (!problem) return undefined;
  return `The daemon cannot store changes since ${localTime(problem.since)} (${since(problem.since, now)}): ` +
    `${problem.error}. Reading works; every change (submit, cancel, drain…) is refused ` +
    "until the store writes again, and the daemon's own changes wait to be stored in order.";
}
