// The node map (/nodes, like Grafana's status map or Slurm's sview): every node a small tile,
// hundreds to a screen, grouped by rack; filters in the URL. And one node's page (/nodes/NAME).
import { useState } from "preact/hooks";
import { apiUrl, send } from "../api";
import { useApi, useApp } from "../app-state";
import { ConfirmButton, ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { bandwidth, cores, count, since } from "../logic/format";
import { summarizeHealth } from "../logic/health";
import {
  coreSummary, densityFor, filterNodes, groupByRack, isBadState, nodeDensities, nodeFilterFromQuery, nodeJobs, nodesPath,
  nodeStates, nodeSummary, placementLabel, stateCounts, tileWidthCh, utilisation, type NodeDensity, type NodeFilter,
} from "../logic/nodes";
import { operatesNodes } from "../logic/roles";
import type { Node, NodeState } from "../logic/types";
import { navigate, useSearch } from "../router";

const densityLabels: Record<NodeDensity, string> = { auto: "Auto", tiles: "Tiles", compact: "Compact" };

// Jobs a tile names before "+N more".
const jobsOnTile = 2;

function tipId(name: string): string {
  return `tip-${name.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

// A node's facts in words: read by screen readers always (aria-describedby), shown on hover or
// focus; the same on a tile and on a compact cell.
function Details({ n, now, id }: { n: Node; now: Date; id: string }) {
  const { jobs } = nodeJobs(n);
  const running = n.attempts?.length ?? 0;
  return (
    <span id={id} role="tooltip" class="tile-tip">
      <span><strong>{n.name}</strong> {n.state} for {since(n.state_since, now)}{n.connected ? "" : ", agent not connected"}</span>
      {n.state_reason && <span>reason: {n.state_reason}</span>}
      <span>{cores(n.used_cores)} of {n.cores} in use</span>
      {n.faults && n.faults.length > 0 && <span>faults: {n.faults.join(", ")}</span>}
      {n.state === "DRAINED" && running > 0 && <span>draining: {count(running, "attempt")} still running</span>}
      {jobs.length > 0 && <span>running: {jobs.map((j) => `#${j.label}`).join(", ")}</span>}
      {(n.other_attempts ?? 0) > 0 && <span>{count(n.other_attempts!, "attempt")} of other users</span>}
    </span>
  );
}

function nodeClass(kind: string, n: Node): string {
  return `${kind} state-${n.state.toLowerCase()}${isBadState(n.state) ? ` ${kind}-bad` : ""}`;
}

function Tile({ n, now }: { n: Node; now: Date }) {
  const { jobs, unknown } = nodeJobs(n);
  const hidden = (n.other_attempts ?? 0) + unknown + Math.max(0, jobs.length - jobsOnTile);
  const tip = tipId(n.name);
  return (
    <li class={nodeClass("tile", n)} data-node={n.name} data-state={n.state}
        data-faults={n.faults?.length ? "" : undefined} data-disconnected={n.connected ? undefined : ""}>
      <a class="tile-name" href={`/nodes/${encodeURIComponent(n.name)}`} aria-describedby={tip}>{n.name}</a>
      <span class="tile-line">
        <span class="tile-state">{n.state}</span>
        <span class="tile-cores">{n.used_cores}/{n.cores}</span>
      </span>
      <span class="tile-bar" aria-hidden="true"><span class="tile-fill" style={{ width: `${utilisation(n) * 100}%` }} /></span>
      {(jobs.length > 0 || hidden > 0) && (
        <span class="tile-jobs">
          {jobs.slice(0, jobsOnTile).map((j) => <a key={j.label} href={j.path}>#{j.label}</a>)}
          {hidden > 0 && <span class="muted">+{hidden}</span>}
        </span>
      )}
      <Details n={n} now={now} id={tip} />
    </li>
  );
}

// The zoomed-out map: a square of the state's colour, filled from the bottom by the cores in use;
// its name is the link's label and its facts are the details.
function Cell({ n, now }: { n: Node; now: Date }) {
  const tip = tipId(n.name);
  return (
    <li class={nodeClass("cell", n)} data-node={n.name} data-state={n.state}
        data-faults={n.faults?.length ? "" : undefined} data-disconnected={n.connected ? undefined : ""}>
      <a class="cell-link" href={`/nodes/${encodeURIComponent(n.name)}`} aria-label={n.name} aria-describedby={tip}>
        <span class="cell-fill" style={{ height: `${utilisation(n) * 100}%` }} />
      </a>
      <Details n={n} now={now} id={tip} />
    </li>
  );
}

function Grid({ nodes, label, now, drawing, widthCh }: { nodes: Node[]; label: string; now: Date; drawing: "tiles" | "compact"; widthCh: number }) {
  if (drawing === "compact") {
    return <ul class="node-cells" aria-label={label}>{nodes.map((n) => <Cell key={n.name} n={n} now={now} />)}</ul>;
  }
  return (
    <ul class="node-grid" aria-label={label} style={{ "--tile-ch": String(widthCh) }}>
      {nodes.map((n) => <Tile key={n.name} n={n} now={now} />)}
    </ul>
  );
}

function Filters({ filter, counts }: { filter: NodeFilter; counts: Record<NodeState, number> }) {
  const go = (change: Partial<NodeFilter>, replace = false) => navigate(nodesPath({ ...filter, ...change }), replace);
  return (
    <form class="filters" role="search" aria-label="Node filters" onSubmit={(e) => e.preventDefault()}>
      <fieldset>
        <legend>State</legend>
        {nodeStates.map((s) => (
          <label key={s} class={`check chip state-${s.toLowerCase()}`}>
            <input type="checkbox" name="state" value={s} checked={filter.states.includes(s)}
                   onChange={(e) => go({ states: nodeStates.filter((x) => (x === s ? (e.target as HTMLInputElement).checked : filter.states.includes(x))) })} />
            {" "}{s.toLowerCase()} <span class="chip-count" aria-label={`(${counts[s]})`}>{counts[s]}</span>
          </label>
        ))}
      </fieldset>
      <label>Name <input type="search" name="name" size={12} value={filter.name} placeholder="part of a name"
                         onInput={(e) => go({ name: (e.target as HTMLInputElement).value }, true)} /></label>
      <label class="check"><input type="checkbox" name="group" checked={filter.grouped}
                                  onChange={(e) => go({ grouped: (e.target as HTMLInputElement).checked })} /> Group by {placementLabel}</label>
      <div class="segmented" role="group" aria-label="Density">
        {nodeDensities.map((d) => (
          <button key={d} type="button" aria-pressed={filter.density === d} onClick={() => go({ density: d })}>{densityLabels[d]}</button>
        ))}
      </div>
      <a href="/nodes">Clear filters</a>
    </form>
  );
}

export function Nodes() {
  const search = useSearch();
  const filter = nodeFilterFromQuery(search);
  const nodes = useApi(apiUrl("/v1/nodes"));
  const all = nodes.data?.nodes ?? [];
  const shown = filterNodes(all, filter);
  const filtered = filter.states.length > 0 || filter.name.trim() !== "";
  const now = new Date();
  const drawing = densityFor(filter.density, shown.length);
  const widthCh = tileWidthCh(shown);
  return (
    <>
      <h1>Nodes</h1>
      <Filters filter={filter} counts={stateCounts(all)} />
      <p class="summary" data-node-summary>
        {nodes.data ? <>{nodeSummary(all)} · {coreSummary(all)}{filtered ? ` · ${shown.length} shown` : ""}</> : "Loading…"}
      </p>
      <ErrorNote error={nodes.error} />
      {nodes.data && shown.length === 0 && <p>{all.length ? "No node matches these filters." : "No node has joined yet."}</p>}
      {filter.grouped
        ? groupByRack(shown).map(([rack, members]) => (
          <section key={rack} class="rack" aria-label={`${placementLabel} ${rack}`}>
            <h2>{placementLabel} {rack} <span class="hint">{count(members.length, "node")} · {coreSummary(members)}</span></h2>
            <Grid nodes={members} label={`Nodes of ${placementLabel} ${rack}`} now={now} drawing={drawing} widthCh={widthCh} />
          </section>
        ))
        : shown.length > 0 && <Grid nodes={shown} label="Nodes" now={now} drawing={drawing} widthCh={widthCh} />}
    </>
  );
}

function NodeJobs({ n }: { n: Node }) {
  const running = n.attempts?.length ?? 0;
  const { jobs, unknown } = nodeJobs(n);
  const others = n.other_attempts ?? 0;
  return (
    <Section title="Jobs on this node">
      {running + others === 0 ? <p>Nothing runs here now.</p> : (
        <ul class="plain" data-node-jobs>
          {jobs.map((j) => (
            <li key={j.label}><a href={j.path}>#{j.label}</a></li>
          ))}
          {unknown > 0 && <li class="muted">{count(unknown, "attempt")} whose job is not known</li>}
          {others > 0 && <li class="muted">{count(others, "attempt")} of other users</li>}
        </ul>
      )}
    </Section>
  );
}

export function NodePage({ name }: { name: string }) {
  const { who } = useApp();
  const node = useApi(apiUrl("/v1/nodes/{name}", { path: { name } }));
  const health = useApi(apiUrl("/v1/nodes/{name}/health", { path: { name }, query: { limit: 50 } }));
  const [reason, setReason] = useState("");
  const rows = (health.data?.checks ?? []).map((c) => ({ at: c.at, kind: c.kind, ...summarizeHealth(c) }));
  const kinds = [...new Set(rows.flatMap((r) => Object.keys(r.busbw)))].sort();
  const n = node.data;
  const undrain = () => send("post", apiUrl("/v1/nodes/{name}/undrain", { path: { name } })).then(node.reload);
  const drain = () => send("post", apiUrl("/v1/nodes/{name}/drain", { path: { name } }),
                           { reason: reason.trim() || "drained from the dashboard" }).then(node.reload);
  const running = n?.attempts?.length ?? 0;
  return (
    <>
      <h1>Node {name}</h1>
      <ErrorNote error={node.error} />
      {n && (
        <dl class="facts">
          <dt>State</dt><dd><StateBadge state={n.state} /> {n.state_reason} (for {since(n.state_since, new Date())}, since <Time at={n.state_since} />)
            {n.state === "DRAINED" && running > 0 && <> · draining: {count(running, "attempt")} still running</>}</dd>
          <dt>Cores</dt><dd>{cores(n.used_cores)} of {n.cores} in use, {cores(n.free_cores)} free to use</dd>
          <dt>Labels</dt><dd>{Object.entries(n.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(", ") || "none"}</dd>
          <dt>Injected faults</dt><dd>{n.faults?.join(", ") || "none"}</dd>
          <dt>Last heartbeat</dt><dd><Time at={n.last_heartbeat} /></dd>
          <dt>Agent</dt><dd>{n.agent_version ?? "—"} {n.connected ? "(connected)" : "(not connected)"}</dd>
        </dl>
      )}
      {n && operatesNodes(who.role) && (
        <div class="actions" role="group" aria-label="Node actions">
          {n.state === "DRAINED" &&
            <ConfirmButton label="Undrain" question={`Return ${name} to service?`} onConfirm={undrain} />}
          {n.state === "UNHEALTHY" &&
            <ConfirmButton label="Return to service" question={`Health-check ${name} and return it to service if it passes?`}
                           onConfirm={undrain} />}
          {n.state !== "DRAINED" &&
            <ConfirmButton label="Drain" danger question={`Drain ${name}? Running attempts finish; no new work is placed on it.`}
                           onConfirm={drain}>
              <label class="field">Reason <input name="reason" size={36} maxLength={1024} value={reason}
                                                 placeholder="drained from the dashboard"
                                                 onInput={(e) => setReason((e.target as HTMLInputElement).value)} /></label>
            </ConfirmButton>}
          <ConfirmButton label="Run health check" question={`Run the accelerator health suite on ${name} now?`}
                         onConfirm={() => send("post", apiUrl("/v1/healthchecks"), { nodes: [name], suites: ["accelerator"] })
                           .then(health.reload)} />
        </div>
      )}
      {n && <NodeJobs n={n} />}
      <Section title="Health history">
        <ErrorNote error={health.error} />
        {health.data && rows.length === 0 ? <p>No health check has run on {name} yet.</p> : (
          <table>
            <thead><tr><th>When</th><th>Check</th><th>Verdict</th><th>Tests failed</th>{kinds.map((k) => <th key={k}>{k} busbw</th>)}</tr></thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  <td><Time at={r.at} /></td><td>{r.kind ?? "—"}</td>
                  <td><StateBadge state={r.verdict} /> {r.reason}</td>
                  <td>{r.failed.length ? <ul class="plain">{r.failed.map((f) => <li key={f}>{f}</li>)}</ul> : `none of ${r.tests}`}</td>
                  {kinds.map((k) => <td key={k}>{bandwidth(r.busbw[k])}</td>)}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Section>
    </>
  );
}
