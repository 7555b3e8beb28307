// A pending job's wait as one sentence: where it is, for how long, and why (the scheduler's reason).
import { duration, ordinal } from "./format";
import type { Job } from "./types";

const byCode: Record<string, string> = {
  resources: "not enough free cores on healthy nodes yet",
  nodes_unavailable: "fewer nodes in service than it needs could hold it; it waits for nodes to return to service",
  priority: "it would fit, but jobs ahead of it start first",
  reservation: "it would fit, but would delay the job that holds the reservation",
  share_cap: "its share has reached its cap on running cores",
  compute_reservation: "the cores left are held back for shares with no running work",
  dependency: "it waits for the jobs it depends on",
  backoff: "it waits out the backoff before its next attempt",
  held: "it is held until released",
  array_limit: "its array already has as many tasks queued or running as its %N limit allows",
};

// Reason codes of jobs that wait outside the ready queue, with no place in it to name, in the order
// the queue view groups them (daemon/api/jobs.cpp live_fields: "held"; scheduler/reasons.cpp
// to_string for the rest).
export const waitingCodes = ["held", "dependency", "backoff", "array_limit"];

export function pendingSentence(job: Job, now: Date): string {
  const waited = duration((now.getTime() - new Date(job.submitted_at).getTime()) / 1000);
  const outside = !job.queue_position && waitingCodes.includes(job.pending_reason?.code ?? "");
  const where = job.queue_position ? `${ordinal(job.queue_position)} in the queue` : outside ? "Waiting outside the queue" : "In the queue";
  const why = job.pending_reason?.message || byCode[job.pending_reason?.code ?? ""] || "waiting for the scheduler's next pass";
  return `${where} of share ${job.share} for ${waited}: ${why.replace(/\.$/, "")}.`;
}
