import { useEffect, useRef, useState } from "preact/hooks";
import { apiUrl, explain, get, send } from "../api";
import { useApi, useApp, type Loaded } from "../app-state";
import { ErrorNote, Section, StateBadge, Time } from "../components/ui";
import { bandwidth, jobLabel, jobPath, percent } from "../logic/format";
import {
  allSuites, checkableNodes, checkRequest, checkToShow, togglePick, waitUntilListed, type WaitOutcome,
} from "../logic/health-check";
import { busbwAgainstReference, cellLabel, pairGroups, type PairMatrix } from "../logic/health-matrix";
import { operatesNodes } from "../logic/roles";
import type { CanaryList, HealthCheck, HealthCheckList, Job, Node, Suite } from "../logic/types";
import { JobTable } from "./jobs";

// Verdicts per node: each node's state and why, with its page holding the per-test history.
export function Health() {
  const nodes = useApi(apiUrl("/v1/nodes"));
  const checks = useApi(recentChecksUrl);
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
      <RunCheck nodes={list} onListed={checks.reload} />
      <NewestCanaries />
      <RecentChecks checks={checks} />
    </>
  );
}

const recentChecksUrl = apiUrl("/v1/healthchecks", { query: { limit: 20 } });
// How long the page watches for a check it started: 2 minutes, then the page's own refresh.
const listedTries = 40;
const listedIntervalMs = 3000;

// POST /v1/healthchecks, for roles that operate nodes (the API refuses others): the nodes and
// suites to check. Says which check started, or why none did in the API's words (400 naming a
// field, e.g. a busy node for the accelerator suite), then watches the recent checks, which list
// finished ones only, until it is there.
function RunCheck({ nodes, onListed }: { nodes: Node[]; onListed: () => void }) {
  const { who } = useApp();
  const [allNodes, setAllNodes] = useState(true);
  const [picked, setPicked] = useState<string[]>([]);
  const [suites, setSuites] = useState<Suite[]>(allSuites);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ started?: HealthCheck; waited?: WaitOutcome; error?: string }>({});
  const run = useRef(0);  // the newest start; an older one's wait stops, as does one whose page went
  useEffect(() => () => void run.current++, []);
  if (!operatesNodes(who.role)) return null;
  const submit = async (event: Event) => {
    event.preventDefault();
    const built = checkRequest({ allNodes, picked, suites }, nodes);
    if ("problem" in built) return setOutcome({ error: built.problem });
    const mine = ++run.current;
    setBusy(true);
    setOutcome({});
    let started: HealthCheck;
    try {
      started = await send("post", apiUrl("/v1/healthchecks"), built.request);
    } catch (e) {
      return setOutcome({ error: `Could not start a health check: ${explain(e)}` });
    } finally {
      setBusy(false);
    }
    setOutcome({ started });
    const waited = await waitUntilListed(
      async () => (await get(recentChecksUrl)).checks.some((c) => c.id === started.id),
      { tries: listedTries, intervalMs: listedIntervalMs, stopped: () => run.current !== mine });
    if (waited === "stopped") return;
    setOutcome({ started, waited });
    onListed();
  };
  return (
    <Section title="Run a health check">
      <form class="run-check" onSubmit={submit}>
        <fieldset>
          <legend>Nodes</legend>
          <label class="check"><input type="radio" name="which-nodes" checked={allNodes} onChange={() => setAllNodes(true)} />
            {" "}All connected nodes ({checkableNodes(nodes).length})</label>
          <label class="check"><input type="radio" name="which-nodes" checked={!allNodes} onChange={() => setAllNodes(false)} />
            {" "}Only these:</label>
          {!allNodes && nodes.map((n) => (
            <label class="check" key={n.name}>
              <input type="checkbox" disabled={!n.connected} checked={n.connected && picked.includes(n.name)}
                     onChange={(e) => setPicked(togglePick(picked, n.name, (e.target as HTMLInputElement).checked))} />
              {" "}{n.name}{n.connected ? "" : " (not connected)"}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Suites</legend>
          {allSuites.map((s) => (
            <label class="check" key={s}>
              <input type="checkbox" checked={suites.includes(s)}
                     onChange={(e) => setSuites(togglePick(suites, s, (e.target as HTMLInputElement).checked))} />
              {" "}{s}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" disabled={busy}>{busy ? "Starting a check…" : "Run check"}</button>
      </form>
      <p class="hint">The accelerator suite tests every core of each node and needs nodes running no attempts; the
        collective suite tests the nodes together and needs at least 2.</p>
      <CheckOutcome {...outcome} />
    </Section>
  );
}

function CheckOutcome({ started, waited, error }: { started?: HealthCheck; waited?: WaitOutcome; error?: string }) {
  if (error) return <p class="error" role="alert">{error}</p>;
  if (!started) return null;
  const what = `health check #${started.id} of ${started.nodes.length === 1 ? "1 node" : `${started.nodes.length} nodes`}`;
  return (
    <p role="status" data-check={started.id}>
      {waited === "listed" ? `Finished ${what}: its verdicts are under Recent checks.`
        : waited === "not yet" ? `The ${what} has not finished after ${(listedTries * listedIntervalMs) / 60_000} minutes; its verdicts appear under Recent checks when it finishes.`
          : `Started ${what}. Its verdicts appear under Recent checks when it finishes.`}
    </p>
  );
}

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
      setOutcome({ job: await send("post", apiUrl("/v1/canaries")) });
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
  const canaries = useApi(apiUrl("/v1/canaries", { query: { limit: 5 } }));
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

// The newest checks; the one shown in detail is the chosen one, else the newest that matters (checkToShow).
function RecentChecks({ checks }: { checks: Loaded<HealthCheckList> }) {
  const [chosen, setChosen] = useState<number>();
  const list = checks.data?.checks ?? [];
  const shown = list.find((c) => c.id === chosen) ?? checkToShow(list);
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

function PairTable({ matrix, label }: { matrix: PairMatrix; label: string }) {
  return (
    <div class="matrix-scroll">
      <table class="matrix" aria-label={label}>
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
  );
}

function CheckDetail({ check }: { check: HealthCheck }) {
  const groups = pairGroups(check);
  const bad = groups.flatMap((g) => g.bad);
  const rows = busbwAgainstReference(check);
  return (
    <>
      <Section title={`Check #${check.id}: verdicts`}>
        {check.error && <p class="error">{check.error}</p>}
        <ul class="plain">
          {check.verdicts.map((v) => <li key={v.node}><strong>{v.node}</strong> <StateBadge state={v.state} /> {v.reason}</li>)}
        </ul>
      </Section>
      <Section title="Pair tests">
        {groups.length === 0 ? <p>This check compared no pairs (fewer than 3 nodes, or no collective suite).</p> : (
          <>
            <p>{bad.length === 0 ? "Every pair passed." :
              `Bad pairs: ${bad.map(([a, b]) => `${a} + ${b}`).join(", ")}.`}{" "}
              {groups.length > 1 && `Pairs were compared within ${groups.length} groups, one matrix each. `}
              Each cell: the pair's outcome and its slowest collective's busbw as a share of the reference.</p>
            {groups.map((g, i) => (
              <PairTable key={g.nodes[0]} matrix={g}
                         label={groups.length === 1 ? `Pair tests of check ${check.id}` :
                           `Pair tests of check ${check.id}, group ${i + 1} of ${groups.length}`} />
            ))}
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
  const canaries = useApi(apiUrl("/v1/canaries", { query: { limit: 100 } }));
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
