import { apiUrl } from "../api";
import { useApi, useApp } from "../app-state";
import { ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { coreHours, cores, percent } from "../logic/format";
import { readsEveryJob } from "../logic/roles";
import { pendingInCluster } from "../logic/waiting";
import type { JobList, NodeState } from "../logic/types";
import { EventFeed } from "./events";
import { JobTable } from "./jobs";
import { ClusterOverTime } from "./over-time";

const nodeStates: NodeState[] = ["HEALTHY", "SUSPECT", "UNHEALTHY", "DRAINED", "DOWN"];

// A list's length, "1,000+" when the server has more pages.
function jobCount(list?: JobList): string {
  if (!list) return "—";
  return `${list.jobs.length.toLocaleString("en-US")}${list.next ? "+" : ""}`;
}

export function Overview() {
  const nodes = useApi(apiUrl("/v1/nodes"));
  const running = useApi(apiUrl("/v1/jobs", { query: { state: "RUNNING", limit: 1000 } }));
  // The whole cluster's pending count from the share table: one small answer however long the queue.
  const shares = useApi(apiUrl("/v1/shares"));
  const recent = useApi(apiUrl("/v1/jobs", { query: { limit: 10 } }));
  // The cluster's (or, for users, their own jobs') over a fixed window, from every attempt that ran in it.
  const goodput = useApi(apiUrl("/v1/goodput", { query: { window: "24h", limit: 1 } }));
  const canaries = useApi(apiUrl("/v1/canaries", { query: { limit: 1 } }));
  const { events, who } = useApp();
  const list = nodes.data?.nodes ?? [];
  const total = list.reduce((n, x) => n + x.cores, 0);
  // Free means usable now: the daemon counts none on a node that takes no work.
  const free = list.reduce((n, x) => n + x.free_cores, 0);
  const used = list.reduce((n, x) => n + x.used_cores, 0);
  const canary = canaries.data?.canaries[0];
  return (
    <>
      <h1>Overview</h1>
      <ErrorNote error={nodes.error ?? running.error} />
      <div class="cards">
        <div class="card" aria-label="Nodes by state">
          <h2>Nodes</h2>
          <p class="big">{list.length}</p>
          <ul class="plain">
            {nodeStates.map((s) => {
              const n = list.filter((x) => x.state === s).length;
              return n ? <li key={s}><StateBadge state={s} /> {n}</li> : null;
            })}
          </ul>
        </div>
        <div class="card"><h2>Cores</h2><p class="big">{cores(used)}</p><p>in use, {cores(free)} free to use, of {cores(total)}</p></div>
        <div class="card"><h2>Jobs</h2><p class="big">{jobCount(running.data)} running</p>{!readsEveryJob(who.role) && <p>of yours</p>}<p data-cluster-pending>{shares.data ? pendingInCluster(shares.data.shares) : "— pending in the cluster"}</p></div>
        <div class="card"><h2>Goodput</h2><p class="big">{percent(goodput.data?.cluster.goodput)}</p><p>of {goodput.data ? coreHours(goodput.data.cluster.allocated_core_s) : "—"} allocated in the last 24 h{readsEveryJob(who.role) ? "" : ", your jobs"}</p></div>
        <div class="card"><h2>Last canary</h2>
          {canary ? <p><a href={`/jobs/${canary.id}`}>#{canary.id}</a> <StateBadge state={canary.state} /><br /><Time at={canary.ended_at ?? canary.submitted_at} /></p> : <p>none yet</p>}
        </div>
      </div>
      <ClusterOverTime />
      <Section title="Recent jobs"><JobTable jobs={recent.data?.jobs ?? []} /></Section>
      <Section title="Recent events"><EventFeed events={events.slice(0, 15)} /></Section>
    </>
  );
}
