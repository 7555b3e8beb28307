// An attempt's provenance on the job page: what it ran with, and what changed since another attempt.
import { useState } from "preact/hooks";
import { apiUrl } from "../api";
import { useApi } from "../app-state";
import { ErrorNote, Section } from "../components/ui";
import { compareProvenance } from "../logic/provenance";
import type { Attempt } from "../logic/types";

const provenanceUrl = (job: number, n: number) =>
  apiUrl("/v1/jobs/{id}/attempts/{n}/provenance", { path: { id: String(job), n: String(n) } });

export function ProvenanceSection({ job, attempts }: { job: number; attempts: Attempt[] }) {
  const newest = attempts.length ? attempts[attempts.length - 1].number : undefined;
  const [chosen, setChosen] = useState<number>();
  const [against, setAgainst] = useState<number>();
  const n = chosen ?? newest;
  const shown = useApi(n === undefined ? null : provenanceUrl(job, n));
  const other = useApi(against === undefined || against === n ? null : provenanceUrl(job, against));
  if (n === undefined) return <Section title="Provenance"><p>No attempt yet.</p></Section>;
  const p = shown.data;
  const numbers = attempts.map((a) => a.number);
  return (
    <Section title="Provenance">
      <div class="toolbar">
        <label>Attempt <select value={String(n)} onChange={(e) => setChosen(Number((e.target as HTMLSelectElement).value))}>
          {numbers.map((x) => <option key={x} value={String(x)}>{x}</option>)}
        </select></label>
        {numbers.length > 1 && (
          <label>Compare with attempt <select value={against === undefined ? "" : String(against)}
                  onChange={(e) => { const v = (e.target as HTMLSelectElement).value; setAgainst(v ? Number(v) : undefined); }}>
            <option value="">none</option>
            {numbers.filter((x) => x !== n).map((x) => <option key={x} value={String(x)}>{x}</option>)}
          </select></label>
        )}
      </div>
      <ErrorNote error={shown.error ?? other.error} />
      {p && (
        <>
          <dl class="facts" aria-label={`Provenance of attempt ${n}`}>
            <dt>Daemon</dt><dd>{p.daemon.version || "—"}{p.daemon.commit ? ` (${p.daemon.commit})` : ""}</dd>
            <dt>Code version</dt><dd>{p.code_version || "—"}</dd>
            <dt>Spec SHA-256</dt><dd><code>{p.spec_sha256}</code></dd>
            <dt>Resumed from</dt><dd>{p.checkpoint ? <><code>{p.checkpoint.path}</code> (step {p.checkpoint.step}
              {p.checkpoint.manifest_sha256 ? <>, manifest <code>{p.checkpoint.manifest_sha256.slice(0, 16)}…</code></> : ", no manifest"})</> : "the start"}</dd>
            {p.kernel && <><dt>Kernel</dt><dd><code>{Object.entries(p.kernel).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ")}</code></dd></>}
          </dl>
          <table aria-label={`Ranks of attempt ${n}`}>
            <thead><tr><th>Rank</th><th>Node</th><th>Agent</th><th>Admitted by</th><th>Environment (masked)</th><th>User facts</th></tr></thead>
            <tbody>
              {p.ranks.map((r) => (
                <tr key={r.rank}>
                  <td>{r.rank}</td><td><a href={`/nodes/${encodeURIComponent(r.node)}`}>{r.node}</a></td>
                  <td>{r.agent_version || "—"}</td>
                  <td>{r.admitted_by ? `check #${r.admitted_by.health_check}: ${r.admitted_by.verdict}` : "never checked"}</td>
                  <td>{r.environment ? (
                    <details><summary>{Object.keys(r.environment).length} variables</summary>
                      <pre>{Object.entries(r.environment).map(([k, v]) => `${k}=${v}`).join("\n")}</pre></details>
                  ) : "not reported yet"}</td>
                  <td>{r.user_facts_error ? <span class="error">{r.user_facts_error}</span>
                    : r.user_facts ? <pre>{JSON.stringify(r.user_facts, null, 2)}</pre> : "none"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {p && other.data && <Differences left={n} right={against!} changes={compareProvenance(p, other.data)} />}
    </Section>
  );
}

function Differences({ left, right, changes }: { left: number; right: number; changes: ReturnType<typeof compareProvenance> }) {
  return (
    <>
      <h3>Attempt {left} against attempt {right}</h3>
      {changes.length === 0 ? <p>Nothing differs.</p> : (
        <table class="diff" aria-label={`Differences between attempts ${left} and ${right}`}>
          <thead><tr><th>Field</th><th>Attempt {left}</th><th>Attempt {right}</th></tr></thead>
          <tbody>
            {changes.map((d) => <tr key={d.field}><td>{d.field}</td><td>{d.left ?? "(none)"}</td><td>{d.right ?? "(none)"}</td></tr>)}
          </tbody>
        </table>
      )}
    </>
  );
}
