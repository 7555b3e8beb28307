// The overview's "Cluster over time": what the daemon sampled of the cluster (GET /v1/cluster/history)
// over the last hour, 24 h or 7 d, as four charts.
import { useEffect, useMemo, useState } from "preact/hooks";
import { apiUrl } from "../api";
import { useApi } from "../app-state";
import { TimeChart } from "../components/time-chart";
import { ErrorNote, Section } from "../components/ui";
import { defaultHistoryWindow, historyCharts, historyWindows, openingWindow } from "../logic/history";

// No event marks a new sample (a quiet cluster sends none), so the charts are fetched again each
// sampling interval instead, though not more often than the 10 s refresh without a stream.
const slowestRefreshS = 10;

export function ClusterOverTime() {
  const [choice, setChoice] = useState<string>(defaultHistoryWindow);
  const [chosen, setChosen] = useState(false);  // by the user: never changed under them
  const url = apiUrl("/v1/cluster/history", { query: { window: choice } });
  const history = useApi(url, false);
  useEffect(() => {
    if (chosen || !history.data || history.path !== url) return;
    const opening = openingWindow(history.data, new Date());
    if (opening !== choice) setChoice(opening);
    setChosen(true);
  }, [history.data]);
  const everyS = Math.max(history.data?.sample_interval_s ?? slowestRefreshS, slowestRefreshS);
  useEffect(() => {
    const timer = setInterval(history.reload, everyS * 1000);
    return () => clearInterval(timer);
  }, [everyS]);
  const charts = useMemo(() => (history.data ? historyCharts(history.data) : []), [history.data]);
  return (
    <Section title="Cluster over time">
      <div class="segmented" role="group" aria-label="Window">
        {historyWindows.map((w) => (
          <button key={w.query} type="button" aria-pressed={w.query === choice} onClick={() => {
            setChosen(true);
            setChoice(w.query);
          }}>{w.label}</button>
        ))}
      </div>
      <ErrorNote error={history.error} />
      {!history.data && !history.error && <p class="hint">Loading…</p>}
      <div class="charts" data-window-s={history.data?.window_s} aria-busy={history.path !== url}>
        {charts.map((c) => <TimeChart key={c.title} chart={c} />)}
      </div>
    </Section>
  );
}
