// A uPlot time series of one metric over steps: the mean as a line, the bucket's min-max as a band,
// attempt boundaries (resume points) and gradient-norm spikes as marked steps. A metric with no
// values says so in a sentence (no empty axes, no empty legend); `log` draws the y axis on a
// log scale (uPlot's distr 3), only offered where every value is above zero.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "preact/hooks";
import { hasBand, hasValues, logScaleFits, type Series } from "../logic/downsample";

export function Chart({ title, unit, series, marks, log, onLog }: {
  title: string; unit: string; series: Series; marks: { step: number; kind: "attempt" | "spike" }[];
  log?: boolean; onLog?: (on: boolean) => void;  // onLog: offer the log-scale toggle
}) {
  const host = useRef<HTMLDivElement>(null);
  const drawable = hasValues(series);
  const logFits = logScaleFits(series);
  const logOn = !!log && logFits;
  useEffect(() => {
    const el = host.current;
    if (!el || !drawable) return;
    const style = getComputedStyle(document.documentElement);
    const line = style.getPropertyValue("--accent").trim() || "#2f6fde";
    const band = style.getPropertyValue("--band").trim() || "rgba(47,111,222,0.2)";
    const markColour = { attempt: style.getPropertyValue("--warn").trim() || "#b26a00",
                         spike: style.getPropertyValue("--bad").trim() || "#c62828" };
    const banded = hasBand(series);
    const plot = new uPlot({
      width: Math.max(280, el.clientWidth),
      height: 200,
      title,
      scales: { x: { time: false }, y: logOn ? { distr: 3, log: 10 } : {} },
      axes: [{ label: "step" }, { label: logOn ? `${unit} (log)` : unit, size: 70 }],
      // Only series that draw are listed: no struck-out min and max without a band.
      series: banded
        ? [{ label: "step" }, { label: "mean", stroke: line, width: 1.5 }, { label: "min", stroke: band }, { label: "max", stroke: band }]
        : [{ label: "step" }, { label: unit, stroke: line, width: 1.5 }],
      bands: banded ? [{ series: [3, 2], fill: band }] : [],
      hooks: {
        draw: [(u: uPlot) => {
          const ctx = u.ctx;
          for (const mark of marks) {
            const x = u.valToPos(mark.step, "x", true);
            if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
            ctx.save();
            ctx.strokeStyle = markColour[mark.kind];
            ctx.setLineDash(mark.kind === "attempt" ? [6, 4] : [2, 2]);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.restore();
          }
        }],
      },
    }, (banded ? [series.x, series.mean, series.min, series.max] : [series.x, series.mean]) as uPlot.AlignedData, el);
    return () => plot.destroy();
  }, [series, marks, title, unit, logOn, drawable]);
  if (!drawable) {
    return (
      <figure class="chart chart-empty" data-points={0} data-chart={title}>
        <figcaption>{title}</figcaption>
        <p class="hint">No {title.toLowerCase()} values reported{series.x.length ? ` in ${series.x.length} points` : ""}: nothing to plot.</p>
      </figure>
    );
  }
  return (
    <figure class="chart" data-points={series.x.length} data-chart={title} data-scale={logOn ? "log" : "linear"}>
      {onLog && (
        <label class="chart-scale" title={logFits ? undefined : "A log scale needs every value above zero"}>
          <input type="checkbox" checked={logOn} disabled={!logFits}
                 onChange={(e) => onLog((e.target as HTMLInputElement).checked)} /> Log scale
          <span class="visually-hidden"> for {title.toLowerCase()}</span>
        </label>
      )}
      <div ref={host} role="img" aria-label={`${title}: ${series.x.length} points${logOn ? ", log scale" : ""}`} />
    </figure>
  );
}
