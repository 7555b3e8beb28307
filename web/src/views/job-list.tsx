// Every job, newest first, with what it used (the dashboard's sacct): GET /v1/jobs filtered by the
// URL's query string, a page at a time with the API's cursor.
import { useEffect, useState } from "preact/hooks";
import { useApi, useApp } from "../app-state";
import { ErrorNote, StateBadge, Time } from "../components/ui";
import { count, duration, jobLabel, jobPath, taskCounts } from "../logic/format";
import {
  coreHoursCell, failureClassCell, filterFromQuery, filterSummary, firstPage, goodputText, jobsApiUrl, jobsPath, jobStates,
  nameMatches, nextPage,
  nodesByCores, pageSizes, sinceChoices, withFilter, type JobFilter,
} from "../logic/job-list";
import { readsEveryJob, visibleJobs } from "../logic/roles";
import type { JobState } from "../logic/types";
import { navigate, useSearch } from "../router";

function Filters({ filter, ownOnly }: { filter: JobFilter; ownOnly: boolean }) {
  // Typed filters the API applies are sent when the field is left or Enter pressed, not per letter.
  const [user, setUser] = useState(filter.user);
  const [share, setShare] = useState(filter.share);
  useEffect(() => setUser(filter.user), [filter.user]);
  useEffect(() => setShare(filter.share), [filter.share]);
  const go = (change: Partial<JobFilter>, replace = false) => navigate(jobsPath(withFilter(filter, change)), replace);
  const toggle = (state: JobState, on: boolean) =>
    go({ states: jobStates.filter((s) => (s === state ? on : filter.states.includes(s))) });
  const sinceKnown = sinceChoices.some(([value]) => value === filter.since);
  const sizes = pageSizes.includes(filter.limit) ? pageSizes : [...pageSizes, filter.limit].sort((a, b) => a - b);
  return (
    <form class="filters" role="search" aria-label="Job filters"
          onSubmit={(e) => { e.preventDefault(); go({ user: user.trim(), share: share.trim() }); }}>
      <fieldset>
        <legend>State</legend>
        {jobStates.map((s) => (
          <label key={s} class="check">
            <input type="checkbox" name="state" value={s} checked={filter.states.includes(s)}
                   onChange={(e) => toggle(s, (e.target as HTMLInputElement).checked)} /> {s.toLowerCase()}
          </label>
        ))}
      </fieldset>
      {!ownOnly && (
        <label>User <input name="user" size={10} value={user} placeholder="anyone"
                           onInput={(e) => setUser((e.target as HTMLInputElement).value)}
                           onChange={(e) => go({ user: (e.target as HTMLInputElement).value.trim() })} /></label>
      )}
      <label>Share <input name="share" size={10} value={share} placeholder="any"
                          onInput={(e) => setShare((e.target as HTMLInputElement).value)}
                          onChange={(e) => go({ share: (e.target as HTMLInputElement).value.trim() })} /></label>
      <label>Submitted <select name="since" value={filter.since}
                               onChange={(e) => go({ since: (e.target as HTMLSelectElement).value })}>
        {sinceChoices.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
        {!sinceKnown && <option value={filter.since}>since {filter.since}</option>}
      </select></label>
      <label>Name <input type="search" name="name" size={12} value={filter.name} placeholder="part or glob"
                         aria-describedby="name-scope"
                         onInput={(e) => go({ name: (e.target as HTMLInputElement).value }, true)} /></label>
      <span id="name-scope" class="hint">name filters this page only</span>
      <label>Per page <select name="limit" value={String(filter.limit)}
                              onChange={(e) => go({ limit: Number((e.target as HTMLSelectElement).value) })}>
        {sizes.map((n) => <option key={n} value={String(n)}>{n}</option>)}
      </select></label>
      <button type="submit">Apply</button>
      <a href="/jobs">Clear filters</a>
    </form>
  );
}

export function JobList() {
  const { who } = useApp();
  const search = useSearch();
  const filter = filterFromQuery(search);
  const ownOnly = !readsEveryJob(who.role);
  const url = jobsApiUrl(filter, ownOnly);
  const loaded = useApi(url);
  // Rows of another request (the filters before) are shown dimmed until this one answers, and not
  // at all once it failed (its error says why).
  const current = loaded.path === url;
  const jobs = visibleJobs(who, loaded.data?.jobs ?? []);
  const shown = jobs.filter((j) => nameMatches(j.name, filter.name));
  const next = current ? loaded.data?.next ?? null : null;
  const scope = [
    filterSummary(filter) + (ownOnly ? " (yours: your role reads only your own)" : ""),
    `page ${filter.page}`,
    `${count(filter.limit, "job")} a page`,
  ];
  if (current) {
    scope.push(filter.name
      ? `${shown.length} of the page's ${count(jobs.length, "job")} named like “${filter.name.trim()}”`
      : `${count(jobs.length, "job")} shown`);
  }
  return (
    <>
      <h1>Jobs</h1>
      <Filters filter={filter} ownOnly={ownOnly} />
      <p class="hint" role="status" data-list-status>{current || loaded.error ? scope.join(" · ") : "Loading…"}</p>
      <ErrorNote error={loaded.error} />
      {current && loaded.data?.store_unreadable && <p class="error" role="alert">{loaded.data.store_unreadable}</p>}
      {!current && loaded.error ? null
        : current && jobs.length === 0 ? <p>No jobs match these filters{filter.page > 1 ? " on this page" : ""}.</p>
        : current && shown.length === 0 ? <p>No job on this page has a name like “{filter.name.trim()}”. The name filter
            narrows the loaded page only: later pages may hold some.</p>
        : (
          <div class="table-scroll">
            <table class="dense" aria-label="Jobs" aria-busy={!current}>
              <thead>
                <tr>
                  <th scope="col">Job</th><th scope="col">Name</th><th scope="col">User</th><th scope="col">Share</th>
                  <th scope="col">State</th><th scope="col" title="Nodes × cores per node">Nodes × cores</th>
                  <th scope="col">Submitted</th><th scope="col" class="num">Waited</th>
                  <th scope="col" class="num" title="First start to end, or to now">Elapsed</th>
                  <th scope="col" class="num" title="Cores held × hours held, over every attempt">Core-hours</th>
                  <th scope="col" class="num" title="Share of the allocated core-time that produced kept work">Goodput</th>
                  <th scope="col" title="Why a failed job failed">Class</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((j) => {
                  const a = j.accounting;
                  return (
                    <tr key={j.id} data-job={j.id} data-state={j.state}>
                      <td><a href={jobPath(j)}>#{jobLabel(j)}</a></td>
                      <td class="name">{j.name}</td><td>{j.user}</td><td>{j.share}</td>
                      <td>
                        <StateBadge state={j.state} />
                        {j.array?.counts && <div class="muted" data-task-counts>{taskCounts(j.array.counts)}</div>}
                      </td>
                      <td>{nodesByCores(a, j.spec)}</td>
                      <td><Time at={j.submitted_at} /></td>
                      <td class="num">{a ? duration(a.wait_s) : "—"}</td>
                      <td class="num">{a && a.elapsed_s !== null ? duration(a.elapsed_s) : "—"}</td>
                      <td class="num" data-core-hours>{coreHoursCell(a?.core_hours)}</td>
                      <td class="num" data-goodput>{goodputText(a)}</td>
                      <td data-failure-class>{failureClassCell(j)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      <nav class="pager" aria-label="Pages">
        {filter.cursor ? <a href={jobsPath(firstPage(filter))}>First page</a> : <span class="muted">First page</span>}
        {next ? <a href={jobsPath(nextPage(filter, next))} rel="next">Next page</a>
          : <span class="muted">{current ? "Last page" : "Next page"}</span>}
      </nav>
    </>
  );
}
