import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface IntervalRow {
  label: string;
  estimate: number;
  lower: number;
  upper: number;
  /** The guard's limit on its worse side (+0.1 for lower_is_better at 10 %, −0.1 for higher_is_better). */
  limit: number;
}

const percent = (value: number) => `${(value * 100).toFixed(0)} %`;

/**
 * Each guard's estimate of the relative change (exposed vs control) with its always-valid interval as a vertical bar,
 * and its limit as a red tick: a bar wholly past its tick is a breach. Drawn with uPlot; the same figures are in the
 * table beside it for screen readers.
 */
export function IntervalChart({ rows }: { rows: IntervalRow[] }) {
  const target = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!target.current || rows.length === 0) return;
    const chart = target.current;
    const xs = rows.map((_, index) => index + 1);
    const data: uPlot.AlignedData = [xs, rows.map((row) => row.estimate), rows.map((row) => row.lower), rows.map((row) => row.upper)];
    const values = rows.flatMap((row) => [row.lower, row.upper, row.limit, 0]);
    const [low, high] = [Math.min(...values), Math.max(...values)];
    const pad = Math.max(0.05, (high - low) * 0.1);
    const none = () => null;
    const drawBars = (plot: uPlot) => {
      const context = plot.ctx;
      context.save();
      rows.forEach((row, index) => {
        const x = plot.valToPos(index + 1, "x", true);
        context.strokeStyle = "#0645ad";
        context.lineWidth = 3 * devicePixelRatio;
        context.beginPath();
        context.moveTo(x, plot.valToPos(row.lower, "y", true));
        context.lineTo(x, plot.valToPos(row.upper, "y", true));
        context.stroke();
        context.strokeStyle = "#b00020";
        context.lineWidth = 2 * devicePixelRatio;
        const y = plot.valToPos(row.limit, "y", true);
        context.beginPath();
        context.moveTo(x - 14 * devicePixelRatio, y);
        context.lineTo(x + 14 * devicePixelRatio, y);
        context.stroke();
      });
      context.restore();
    };
    const plot = new uPlot(
      {
        width: Math.max(260, chart.clientWidth),
        height: 220,
        legend: { show: false },
        cursor: { show: false },
        series: [{}, { label: "estimate", stroke: "#0645ad", paths: none, points: { show: true, size: 9, fill: "#0645ad" } }, { label: "lower", paths: none, points: { show: false } }, { label: "upper", paths: none, points: { show: false } }],
        scales: { x: { time: false, range: [0.5, rows.length + 0.5] }, y: { range: [low - pad, high + pad] } },
        axes: [
          { splits: () => xs, values: (_, splits) => splits.map((split) => rows[split - 1]?.label ?? "") },
          { label: "change, exposed vs control", values: (_, splits) => splits.map(percent), size: 60 },
        ],
        hooks: { draw: [drawBars] },
      },
      data,
      chart,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(260, chart.clientWidth), height: 220 }));
    resize.observe(chart);
    return () => (resize.disconnect(), plot.destroy());
  }, [JSON.stringify(rows)]);
  return <div ref={target} aria-hidden="true" class="interval-chart" />;
}
