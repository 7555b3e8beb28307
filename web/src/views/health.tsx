import { useState } from "preact/hooks";
import { api, explain } from "../api";
import { useApi, useApp } from "../app-state";
import { ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { bandwidth, jobLabel, jobPath, percent } from "../logic/format";
import { busbwAgainstReference, cellLabel, pairMatrix, type CheckRecord } from "../logic/health-matrix";
import { operatesNodes } from "../logic/roles";
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
      <NewestCanaries />
      <RecentChecks />
    </>
  );
}

interface CanaryList { canaries: Job[]; next: string | null; next_run_at: string | null }

// POST /v1/canaries: a canary now, for roles that operate nodes (the API refuses others). Says which
// job started, or why none did (409: one runs already, or no node is ready), then `onRan`.
function RunCanary({ onRan }: { onRan: () => void }) {
  const { who } = useApp();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ job?: Job; error?: string }>({});
  if (!operatesNodes(who.role)) return null;
  const run = async () => {
    setBusy(true);
    setOutcome({});
    try {
      setOutcome({ job: await api<Job>("/v1/canaries", { method: "POST" }) });
    } catch (e) {
      setOutcome({ error: explain(e) });
    } finally {
      setBusy(false);
      onRan();
    }
  };
  return (
    <div class="run-canary">
      <button type="button" class="primary" disabled={busy} onClick={run}>{busy ? "Starting a canary…" : "Run canary now"}</button>
      {outcome.job && <span role="status" data-canary={outcome.job.id}>
        Started canary <a href={jobPath(outcome.job)}>#{jobLabel(outcome.job)}</a>.</span>}
      {outcome.error && <span class="error" role="alert">Could not start a canary: {outcome.error}</span>}
    </div>
  );
}

function NextRun({ list }: { list?: CanaryList }) {
  if (!list) return null;
  return <p class="hint">{list.next_run_at ? <>Next scheduled canary: <Time at={list.next_run_at} />.</>
    : "Scheduled canaries are off (--canary-interval-s 0)."}</p>;
}

// The health page's few newest canaries, with the button; /canaries has them all.
function NewestCanaries() {
  const canaries = useApi<CanaryList>("/v1/canaries?limit=5");
  return (
    <Section title="Canaries">
      <NextRun list={canaries.data} />
      <RunCanary onRan={canaries.reload} />
      <ErrorNote error={canaries.error} />
      <JobTable jobs={canaries.data?.canaries ?? []} />
      <p><a href="/canaries">Every canary</a></p>
    </Section>
  );
}

// The newest checks; the one shown in detail is the chosen one, else the newest that compared pairs.
function RecentChecks() {
  const checks = useApi<{ checks: CheckRecord[] }>("/v1/healthchecks?limit=20");
  const [chosen, setChosen] = useState<number>();
  const list = checks.data?.checks ?? [];
  const shown = list.find((c) => c.id === chosen) ?? list.find((c) => c.localisation) ?? list[0];
  return (
    <>
      <Section title="Recent checks">
        <ErrorNote error={checks.error} />
        <table>
          <thead><tr><th>Check</th><th>Kind</th><th>Result</th><th>Nodes</th><th>Finished</th><th>Pair tests</th></tr></thead>
          <tbody>
            {list.map((c) => (
              <tr key={c.id} aria-current={c === shown ? "true" : undefined}>
                <td><button type="button" onClick={() => setChosen(c.id)} aria-label={`Show check ${c.id}`}>#{c.id}</button></td>
                <td>{c.kind}</td><td><StateBadge state={c.state} /></td><td>{c.nodes.length}</td>
                <td><Time at={c.finished_at} /></td><td>{c.localisation ? c.localisation.tests.length : "none"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      {shown && <CheckDetail check={shown} />}
    </>
  );
}

function CheckDetail({ check }: { check: CheckRecord }) {
  const matrix = pairMatrix(check);
  const rows = busbwAgainstReference(check);
  return (
    <>
      <Section title={`Check #${check.id}: verdicts`}>
        <ul class="plain">
          {check.verdicts.map((v) => <li key={v.node}><strong>{v.node}</strong> <StateBadge state={v.state} /> {v.reason}</li>)}
        </ul>
      </Section>
      <Section title="Pair tests">
        {!matrix ? <p>This check compared no pairs (fewer than 3 nodes, or no collective suite).</p> : (
          <>
            <p>{matrix.bad.length === 0 ? "Every pair passed." :
              `Bad pairs: ${matrix.bad.map(([a, b]) => `${a} + ${b}`).join(", ")}.`}{" "}
              Each cell: the pair's outcome and its slowest collective's busbw as a share of the reference.</p>
            <div class="matrix-scroll">
              <table class="matrix" aria-label={`Pair tests of check ${check.id}`}>
                <thead><tr><th scope="col">node</th>{matrix.nodes.map((n) => <th key={n} scope="col">{n}</th>)}</tr></thead>
                <tbody>
                  {matrix.nodes.map((a) => (
                    <tr key={a}>
                      <th scope="row">{a}</th>
                      {matrix.nodes.map((b) => {
                        const cell = matrix.cell(a, b);
                        if (!cell) return <td key={b} class="pair-none">{a === b ? "—" : "not tested"}</td>;
                        return <td key={b} class={`pair-${cell.outcome}`} title={cell.why || undefined}
                                   data-pair={`${a}+${b}`}>{cellLabel(cell)}</td>;
                      })}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </Section>
      {rows.length > 0 && (
        <Section title="Bus bandwidth against the reference">
          <p class="hint">The reference is, per collective, the median over nodes of each node's best busbw in a correct
            test; a test under {percent(check.localisation?.suspect_fraction)} of it is slow.</p>
          <table aria-label="Bus bandwidth against the reference">
            <thead><tr><th>Test</th><th>Collective</th><th>busbw</th><th>Reference</th><th>Ratio</th><th>Outcome</th></tr></thead>
            <tbody>
              {rows.map((r) => (
                <tr key={`${r.test}/${r.kind}`}>
                  <td>{r.test}</td><td>{r.kind}</td><td>{bandwidth(r.busbw)}</td><td>{bandwidth(r.reference)}</td>
                  <td>{percent(r.ratio)}</td><td class={`pair-${r.outcome}`}>{r.outcome}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Section>
      )}
    </>
  );
}

export function Canaries() {
  const canaries = useApi<CanaryList>("/v1/canaries?limit=100");
  return (
    <>
      <h1>Canaries</h1>
      <p class="hint">The daemon's own small training job, run on a schedule to find system problems before users do.</p>
      <NextRun list={canaries.data} />
      <RunCanary onRan={canaries.reload} />
      <ErrorNote error={canaries.error} />
      <JobTable jobs={canaries.data?.canaries ?? []} />
    </>
  );
}
