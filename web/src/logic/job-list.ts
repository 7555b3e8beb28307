// The jobs list (/jobs, like sacct): its filters as a URL query string, so a filtered view is a
// link, and the GET /v1/jobs request they make. The API filters by state, share, user and submit
// time and pages with an opaque cursor bound to those filters; the name filter has no API
// parameter and narrows the loaded page only.
import { apiUrl, type ApiUrl } from "../api";
import type { JobAccounting, JobSpec, JobState } from "./types";

export const jobStates: JobState[] = ["PENDING", "STARTING", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"];

// "Submitted since" choices: spans back from now as the API takes them; "" is any time.
export const sinceChoices: [string, string][] = [["1h", "last hour"], ["1d", "last day"], ["7d", "last 7 days"], ["30d", "last 30 days"], ["", "any time"]];

export const pageSizes = [25, 50, 100, 200, 500];
export const defaultLimit = 100;
const maxLimit = 1000;  // the API's

export interface JobFilter {
  states: JobState[];  // none: every state
  user: string;
  share: string;
  since: string;       // a span back (1d), an RFC 3339 time or a date; "" for any time
  until: string;
  name: string;        // client-side: narrows the loaded page
  limit: number;
  cursor: string;      // the API's `next` of the page before; "" on the first page
  page: number;        // which page the cursor is (1 on the first), only for saying so
}

export const emptyFilter: JobFilter = {
  states: [], user: "", share: "", since: "", until: "", name: "", limit: defaultLimit, cursor: "", page: 1,
};

function positiveInt(text: string | null, fallback: number, max: number): number {
  if (!text || !/^\d+$/.test(text)) return fallback;
  const n = Number(text);
  return n >= 1 ? Math.min(n, max) : fallback;
}

// A query string ("?state=FAILED&user=alice", with or without "?") as a filter. Unknown states are
// dropped, states are kept in their lifecycle order and named in any case.
export function filterFromQuery(search: string): JobFilter {
  const q = new URLSearchParams(search);
  const asked = (q.get("state") ?? "").split(",").map((s) => s.trim().toUpperCase());
  const cursor = q.get("cursor") ?? "";
  return {
    states: jobStates.filter((s) => asked.includes(s)),
    user: (q.get("user") ?? "").trim(),
    share: (q.get("share") ?? "").trim(),
    since: (q.get("since") ?? "").trim(),
    until: (q.get("until") ?? "").trim(),
    name: q.get("name") ?? "",
    limit: positiveInt(q.get("limit"), defaultLimit, maxLimit),
    cursor,
    page: cursor ? positiveInt(q.get("page"), 2, Number.MAX_SAFE_INTEGER) : 1,
  };
}

function query(pairs: [string, string | number | false][]): string {
  const q = new URLSearchParams();
  for (const [key, value] of pairs) if (value !== "" && value !== false) q.set(key, String(value));
  const text = q.toString().replace(/%2C/g, ",");  // state=RUNNING,PENDING reads better than %2C
  return text ? `?${text}` : "";
}

// The dashboard URL of a filter: defaults left out, so the plain list is "/jobs".
export function jobsPath(f: JobFilter): string {
  return "/jobs" + query([
    ["state", f.states.join(",")], ["user", f.user], ["share", f.share], ["since", f.since], ["until", f.until],
    ["name", f.name], ["limit", f.limit !== defaultLimit && f.limit], ["cursor", f.cursor],
    ["page", f.cursor !== "" && f.page],
  ]);
}

// The same filter with some fields changed: a new filter starts again at the first page (a cursor
// is only good with the filters it was given with), unless the change is the page itself or the
// name, which the API never sees.
export function withFilter(f: JobFilter, change: Partial<JobFilter>): JobFilter {
  const next = { ...f, ...change };
  const apiChanged = (["user", "share", "since", "until", "limit"] as const).some((k) => next[k] !== f[k])
    || next.states.join() !== f.states.join();
  if (apiChanged && change.cursor === undefined) return { ...next, cursor: "", page: 1 };
  return next;
}

// The filter's next page, from the answer's `next` cursor.
export function nextPage(f: JobFilter, next: string): JobFilter {
  return { ...f, cursor: next, page: f.page + 1 };
}

export function firstPage(f: JobFilter): JobFilter {
  return { ...f, cursor: "", page: 1 };
}

// GET /v1/jobs for a filter. `ownOnly`: the caller's role reads only its own jobs, which the API
// enforces (a user filter naming someone else is refused), so none is sent.
export function jobsApiUrl(f: JobFilter, ownOnly = false): ApiUrl<"/v1/jobs"> {
  return apiUrl("/v1/jobs", { query: {
    state: f.states.join(","), share: f.share, user: ownOnly ? undefined : f.user,
    since: f.since, until: f.until, limit: f.limit, cursor: f.cursor,
  } });
}

// The name filter: a case-insensitive part of the name, or a glob with * and ?.
export function nameMatches(name: string, filter: string): boolean {
  const want = filter.trim().toLowerCase();
  if (!want) return true;
  const have = name.toLowerCase();
  if (!/[*?]/.test(want)) return have.includes(want);
  const pattern = want.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${pattern}$`).test(have);
}

// A row's shape as sacct would count it: "2 × 4" (nodes × cores per node), "2 × whole" for a job
// that asked for whole nodes and never ran (so holds no known core count).
export function nodesByCores(acc: Pick<JobAccounting, "nodes" | "cores"> | undefined,
                             spec: Pick<JobSpec, "nodes" | "cores_per_node">): string {
  const nodes = acc?.nodes ?? spec.nodes ?? 1;
  const cores = acc ? acc.cores : spec.cores_per_node === undefined ? null : nodes * spec.cores_per_node;
  if (cores === null || cores === undefined) return `${nodes} × whole`;
  if (nodes > 0 && cores % nodes === 0) return `${nodes} × ${cores / nodes}`;
  return `${nodes} nodes, ${cores} cores`;
}

// Goodput as the list writes it: a percentage, or "n/a" when the API judged nothing (null: under
// a core-second allocated) or gave no accounting.
export function goodputText(acc: Pick<JobAccounting, "goodput"> | undefined): string {
  const g = acc?.goodput;
  if (g === null || g === undefined || !Number.isFinite(g)) return "n/a";
  return `${(g * 100).toFixed(1)} %`;
}

// The Core-hours column's cell: always core-hours (the header names the unit), with the decimals a
// short job needs to not read as zero.
export function coreHoursCell(hours: number | null | undefined): string {
  if (hours === null || hours === undefined || !Number.isFinite(hours)) return "—";
  const digits = hours < 1 ? 3 : hours < 100 ? 2 : 0;
  return hours.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

// The Class column's cell: why a job failed, as GET /v1/jobs classifies it; nothing for the others.
export function failureClassCell(job: { state: string; failure_class?: string }): string {
  return job.state === "FAILED" && job.failure_class ? job.failure_class : "—";
}

// A sentence saying what the list shows, for its heading's status line.
export function filterSummary(f: JobFilter): string {
  const parts: string[] = [];
  if (f.states.length) parts.push(f.states.join(" or "));
  if (f.user) parts.push(`of user ${f.user}`);
  if (f.share) parts.push(`in share ${f.share}`);
  const since = sinceChoices.find(([value]) => value === f.since);
  if (f.since) parts.push(since ? `submitted in the ${since[1]}` : `submitted since ${f.since}`);
  if (f.until) parts.push(`submitted until ${f.until}`);
  return parts.length ? `Jobs ${parts.join(", ")}` : "Every job";
}
