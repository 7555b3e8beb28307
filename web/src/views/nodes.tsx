import { api } from "../api";
import { useApi, useApp } from "../app-state";
import { ConfirmButton, ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { bandwidth, cores, since } from "../logic/format";
import { operatesNodes } from "../logic/roles";
import { summarizeHealth, type HealthRecord } from "../logic/health";
import type { Node } from "../logic/types";

// The daemon's default --placement-label; nodes without it are grouped under "no rack".
const placementLabel = "rack";

export function groupByRack(nodes: Node[]): [string, Node[]][] {
  const groups = new Map<string, Node[]>();
  for (const node of nodes) {
    const rack = node.labels?.[placementLabel] ?? "no rack";
    const members = groups.get(rack);
    if (members) members.push(node);
    else groups.set(rack, [node]);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}

export function Nodes() {
  const nodes = useApi<{ nodes: Node[] }>("/v1/nodes");
  return (
    <>
      <h1>Nodes</h1>
      <ErrorNote error={nodes.error} />
      {groupByRack(nodes.data?.nodes ?? []).map(([rack, members]) => (
        <Section key={rack} title={`${placementLabel} ${rack}`}>
          <ul class="node-map">
            {members.map((n) => (
              <li key={n.name} class={`node state-${n.state.toLowerCase()}`} data-node={n.name}>
                <a href={`/nodes/${encodeURIComponent(n.name)}`}>
                  <strong>{n.name}</strong>
                  <StateBadge state={n.state} />
                  <span>{cores(n.used_cores)} of {n.cores} in use</span>
                  {n.faults && n.faults.length > 0 && <span class="faults">faults: {n.faults.join(", ")}</span>}
                </a>
              </li>
            ))}
          </ul>
        </Section>
      ))}
    </>
  );
}

export function NodePage({ name }: { name: string }) {
  const { who } = useApp();
  const node = useApi<Node>(`/v1/nodes/${encodeURIComponent(name)}`);
  const health = useApi<{ checks: HealthRecord[] }>(`/v1/nodes/${encodeURIComponent(name)}/health?limit=50`);
  const rows = (health.data?.checks ?? []).map((c) => ({ at: c.at, kind: c.kind, ...summarizeHealth(c) }));
  const kinds = [...new Set(rows.flatMap((r) => Object.keys(r.busbw)))].sort();
  const n = node.data;
  const act = (path: string, body?: unknown) => api(`/v1/nodes/${encodeURIComponent(name)}/${path}`, { method: "POST", body })
    .then(() => node.reload());
  return (
    <>
      <h1>Node {name}</h1>
      <ErrorNote error={node.error} />
      {n && (
        <dl class="facts">
          <dt>State</dt><dd><StateBadge state={n.state} /> {n.state_reason} (for {since(n.state_since, new Date())})</dd>
          <dt>Cores</dt><dd>{cores(n.used_cores)} in use, {cores(n.free_cores)} free to use</dd>
          <dt>Labels</dt><dd>{Object.entries(n.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(", ") || "none"}</dd>
          <dt>Injected faults</dt><dd>{n.faults?.join(", ") || "none"}</dd>
          <dt>Last heartbeat</dt><dd><Time at={n.last_heartbeat} /></dd>
          <dt>Agent</dt><dd>{n.agent_version ?? "—"} {n.connected ? "(connected)" : "(not connected)"}</dd>
        </dl>
      )}
      {n && operatesNodes(who.role) && (
        <div class="actions" aria-label="Node actions">
          {n.state === "DRAINED" &&
            <ConfirmButton label="Undrain" question={`Return ${name} to service?`} onConfirm={() => act("undrain")} />}
          {n.state === "UNHEALTHY" &&
            <ConfirmButton label="Return to service" question={`Health-check ${name} and return it to service if it passes?`}
                           onConfirm={() => act("undrain")} />}
          {n.state !== "DRAINED" &&
            <ConfirmButton label="Drain" danger question={`Drain ${name}? Running attempts finish; no new work is placed on it.`}
                           onConfirm={() => act("drain", { reason: `drained from the dashboard by ${who.user}` })} />}
          <ConfirmButton label="Run health check" question={`Run the accelerator health suite on ${name} now?`}
                         onConfirm={() => api("/v1/healthchecks", { method: "POST", body: { nodes: [name], suites: ["accelerator"] } })
                           .then(() => health.reload())} />
        </div>
      )}
      <Section title="Health history">
        <ErrorNote error={health.error} />
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
      </Section>
    </>
  );
}
