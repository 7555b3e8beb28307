// A uPlot chart of several named series over time (x in Unix seconds across the whole window), each
// in its own colour from style.css, with uPlot's legend. A null point is a gap, never bridged; a
// value alone between gaps is drawn as a dot. A chart with no values says so in a sentence instead
// of empty axes.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "preact/hooks";
import { isolated, legendTime, timeTicks, type TimeChartData } from "../logic/history";

export function TimeChart({ chart }: { chart: TimeChartData }) {
  const host = useRef<HTMLDivElement>(null);
  const drawable = chart.points > 0;
  useEffect(() => {
    const el = host.current;
    if (!el || !drawable) return;
    const style = getComputedStyle(document.documentElement);
    const colour = (name: string) => style.getPropertyValue(name).trim() || "#2f6fde";
    // uPlot draws axes in black and its grid near-black: unreadable on the dark theme.
    const axis = { stroke: colour("--muted"), grid: { stroke: colour("--line"), width: 1 }, ticks: { stroke: colour("--line"), width: 1 } };
    const plot = new uPlot({
      width: Math.max(280, el.clientWidth),
      height: 200,
      title: chart.title,
      scales: {
        x: { time: true, range: chart.range },
        // From zero: these are counts and shares, and a line near a floor should look it.
        y: { range: (_u, _min, max) => [0, chart.yMax ?? (max > 0 ? max * 1.05 : 1)] },
      },
      axes: [
        { ...axis, values: (_u, splits, _axis, _space, increment) => timeTicks(splits, increment) },
        { ...axis, label: chart.axis, size: 60 },
      ],
      series: [
        { label: "time", value: (_u, v) => (v === null ? "—" : legendTime(v)) },
        ...chart.series.map((s): uPlot.Series => {
          const alone = isolated(s.values);
          const stroke = colour(s.colour);
          return {
            label: s.label, stroke, width: 1.5, dash: s.dash, spanGaps: false,
            value: (_u, v) => (v === null ? "—" : chart.format(v)),
            // uPlot draws every point only where they are few; elsewhere just the ones no line shows.
            // Filled, not uPlot's white, which glares on the dark theme.
            points: { fill: stroke, filter: (_u, _i, show) => (show || !alone.length ? null : alone) },
          };
        }),
      ],
    }, [chart.x, ...chart.series.map((s) => s.values)] as uPlot.AlignedData, el);
    return () => plot.destroy();
  }, [chart, drawable]);
  if (!drawable) {
    return (
      <figure class="chart chart-empty" data-points={0} data-chart={chart.title}>
        <figcaption>{chart.title}</figcaption>
        <p class="hint">{chart.empty}</p>
      </figure>
    );
  }
  return (
    <figure class="chart" data-points={chart.points} data-chart={chart.title}>
      <div ref={host} role="img"
           aria-label={`${chart.title} over the last ${chart.window}: ${chart.series.map((s) => s.label).join(", ")}; ${chart.points} points`} />
    </figure>
  );
}
