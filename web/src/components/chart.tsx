// A uPlot time series of one metric over steps: the mean as a line, the bucket's min-max as a band,
// attempt boundaries (resume points) and gradient-norm spikes as marked steps.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "preact/hooks";
import type { Series } from "../logic/downsample";

export function Chart({ title, unit, series, marks }: {
  title: string; unit: string; series: Series; marks: { step: number; kind: "attempt" | "spike" }[];
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el || series.x.length === 0) return;
    const style = getComputedStyle(document.documentElement);
    const line = style.getPropertyValue("--accent").trim() || "#2f6fde";
    const band = style.getPropertyValue("--band").trim() || "rgba(47,111,222,0.2)";
    const markColour = { attempt: style.getPropertyValue("--warn").trim() || "#b26a00",
                         spike: style.getPropertyValue("--bad").trim() || "#c62828" };
    const hasBand = series.min.some((v, i) => v !== series.max[i]);
    const plot = new uPlot({
      width: Math.max(280, el.clientWidth),
      height: 200,
      title,
      scales: { x: { time: false } },
      axes: [{ label: "step" }, { label: unit, size: 70 }],
      series: [
        { label: "step" },
        { label: "mean", stroke: line, width: 1.5 },
        { label: "min", stroke: band, show: hasBand },
        { label: "max", stroke: band, show: hasBand },
      ],
      bands: hasBand ? [{ series: [3, 2], fill: band }] : [],
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
    }, [series.x, series.mean, series.min, series.max] as uPlot.AlignedData, el);
    return () => plot.destroy();
  }, [series, marks, title, unit]);
  return (
    <figure class="chart" data-points={series.x.length}>
      <div ref={host} role="img" aria-label={`${title}: ${series.x.length} points`} />
    </figure>
  );
}
