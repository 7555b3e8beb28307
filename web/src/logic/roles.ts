// What each role may see and do in the dashboard; the API enforces the same (daemon/base/roles.h), the
// dashboard only hides what would be refused.
import type { Job, JobState, Role, Who } from "./types";

export function operatesNodes(role: Role): boolean {
  return role === "admin" || role === "operator";
}

export function readsEveryJob(role: Role): boolean {
  return role !== "user";
}

// A state the job never leaves.
export function isEnded(state: JobState): boolean {
  return state === "SUCCEEDED" || state === "FAILED" || state === "CANCELLED";
}

export function mayCancel(who: Who, job: Job): boolean {
  if (isEnded(job.state)) return false;
  if (who.role === "viewer") return false;
  return who.role === "admin" || job.user === who.user;
}

// The jobs a list shows: a user's own only; the API already filters, this keeps a live event about
// someone else's job from appearing before the next fetch.
export function visibleJobs<T extends { user: string }>(who: Who, jobs: T[]): T[] {
  return readsEveryJob(who.role) ? jobs : jobs.filter((j) => j.user === who.user);
}
