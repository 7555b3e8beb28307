import { apiUrl } from "../api";
import { useApi } from "../app-state";
import { Bar, ErrorNote } from "../components/ui";
import { coreHours, cores, percent } from "../logic/format";

// The document makes a share's figures optional: one left out reads "—" and draws an empty bar.
function figure(n: number | undefined, show: (n: number) => string): string {
  return n === undefined ? "—" : show(n);
}

export function Shares() {
  const shares = useApi(apiUrl("/v1/shares"));
  const rows = shares.data?.shares ?? [];
  const totalWeight = rows.reduce((n, s) => n + s.weight, 0);
  return (
    <>
      <h1>Fair share</h1>
      <p class="hint">Weight share against decayed usage; the factor F = 2^(−usage/weight) decides which share starts next.</p>
      <ErrorNote error={shares.error} />
      <table class="shares">
        <thead><tr><th>Share</th><th>Weight</th><th>Usage</th><th>Factor</th><th>Running cores</th><th>Pending</th></tr></thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.name} data-share={s.name}>
              <th scope="row">{s.name}</th>
              <td><Bar value={s.weight} max={totalWeight} label={`${s.name} weight`} />{percent(totalWeight ? s.weight / totalWeight : 0)}</td>
              <td><Bar value={s.normalized_usage ?? 0} max={1} label={`${s.name} usage`} />{percent(s.normalized_usage)} ({figure(s.usage_core_s, coreHours)})</td>
              <td><Bar value={s.fair_share_factor ?? 0} max={1} label={`${s.name} fair-share factor`} />{figure(s.fair_share_factor, (f) => f.toFixed(3))}</td>
              <td>{s.max_running_cores ? <Bar value={s.running_cores ?? 0} max={s.max_running_cores} label={`${s.name} running cores`} /> : null}
                {figure(s.running_cores, cores)}{s.max_running_cores ? ` of ${s.max_running_cores} cap` : ""}</td>
              <td>{figure(s.pending_jobs, String)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
