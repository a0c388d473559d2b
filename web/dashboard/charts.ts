/**
 * @module web/dashboard/charts
 * Time-series charts of the dashboard with uPlot (bundled from node_modules by esbuild): one
 * line per list over the days of the range. A chart is replaced, not updated, on each load.
 */
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const COLOURS = ['#2f6fdf', '#e0692b', '#1a7f37', '#8250df', '#bf3989', '#0e8a8a', '#9a6700'];
const charts = new Map<string, uPlot>();

/** Draws `series` (name → one value or null per x) over `days` (unix seconds) into `#id`, as percentages. */
export function drawLines(id: string, days: number[], series: Map<string, Array<number | null>>): void {
  charts.get(id)?.destroy();
  const target = document.getElementById(id)!;
  const names = [...series.keys()];
  const options: uPlot.Options = {
    width: Math.max(300, target.clientWidth || 480),
    height: 220,
    // The range asked for, half a day of margin each side: one day still gets a readable axis.
    scales: { x: { time: true, range: [days[0]! - 43_200, days[days.length - 1]! + 43_200] }, y: { range: (_u, _min, max) => [0, Math.max(0.01, max * 1.1)] } },
    axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${(t * 100).toFixed(1)}%`), size: 60 }],
    series: [
      {},
      ...names.map((name, i) => ({
        label: name,
        stroke: COLOURS[i % COLOURS.length]!,
        width: 2,
        spanGaps: true,
        value: (_u: uPlot, v: number | null) => (v === null ? '–' : `${(v * 100).toFixed(2)}%`),
      })),
    ],
  };
  const data = [days, ...names.map((n) => series.get(n)!)] as uPlot.AlignedData;
  charts.set(id, new uPlot(options, data, target));
}
