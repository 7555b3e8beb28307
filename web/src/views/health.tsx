import { useApi } from "../app-state";
import { ErrorNote, StateBadge, Time } from "../components/ui";
import type { Job, Node } from "../logic/types";
import { JobTable } from "./jobs";

// Verdicts per node: each node's state and why, with its page holding the per-test history.
export function Health() {
  const nodes = useApi<{ nodes: Node[] }>("/v1/nodes");
  const list = [...(nodes.data?.nodes ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <>
      <h1>Health</h1>
      <ErrorNote error={nodes.error} />
      <table>
        <thead><tr><th>Node</th><th>Verdict</th><th>Why</th><th>Since</th><th>Faults injected</th></tr></thead>
        <tbody>
          {list.map((n) => (
            <tr key={n.name}>
              <td><a href={`/nodes/${encodeURIComponent(n.name)}`}>{n.name}</a></td>
              <td><StateBadge state={n.state} /></td><td>{n.state_reason ?? ""}</td>
              <td><Time at={n.state_since} /></td><td>{n.faults?.join(", ") || "none"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

export function Canaries() {
  const canaries = useApi<{ canaries: Job[] }>("/v1/canaries?limit=100");
  return (
    <>
      <h1>Canaries</h1>
      <p class="hint">The daemon's own small training job, run on a schedule to find system problems before users do.</p>
      <ErrorNote error={canaries.error} />
      <JobTable jobs={canaries.data?.canaries ?? []} />
    </>
  );
}
