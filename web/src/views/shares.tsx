import { useApi } from "../app-state";
import { Bar, ErrorNote } from "../components/ui";
import { coreHours, cores, percent } from "../logic/format";
import type { Share } from "../logic/types";

export function Shares() {
  const shares = useApi<{ shares: Share[] }>("/v1/shares");
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
              <td><Bar value={s.normalized_usage} max={1} label={`${s.name} usage`} />{percent(s.normalized_usage)} ({coreHours(s.usage_core_s)})</td>
              <td><Bar value={s.fair_share_factor} max={1} label={`${s.name} fair-share factor`} />{s.fair_share_factor.toFixed(3)}</td>
              <td>{s.max_running_cores ? <Bar value={s.running_cores} max={s.max_running_cores} label={`${s.name} running cores`} /> : null}
                {cores(s.running_cores)}{s.max_running_cores ? ` of ${s.max_running_cores} cap` : ""}</td>
              <td>{s.pending_jobs}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
