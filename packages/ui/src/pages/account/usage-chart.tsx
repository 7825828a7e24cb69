import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const DAY_SECONDS = 86_400;
const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** Calls per UTC day as a bar chart, drawn by uPlot (canvas, about 20 KB gzipped, loaded with this page only). */
export function CallsPerDayChart({ days }: { days: Array<{ day: string; calls: number }> }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!container.current || days.length === 0) return;
    const element = container.current;
    const widthNow = () => Math.max(200, Math.min(900, element.clientWidth));
    const xs = days.map((entry) => Date.parse(`${entry.day}T00:00:00Z`) / 1000);
    const calls = days.map((entry) => entry.calls);
    // The axis is the days of the data and a day either side, fixed: uPlot's own ranging of a
    // time scale with one point widened it to years (Dec 2026 to Sep 2029 for one day).
    const range: [number, number] = [xs[0]! - DAY_SECONDS, xs.at(-1)! + DAY_SECONDS];
    // With no cursor on the chart the legend shows the latest day, not "--".
    const latest = days.length - 1;
    const chart = new uPlot(
      {
        width: widthNow(),
        height: 220,
        scales: { x: { time: true, auto: false, range: () => range } },
        // The scale as uPlot drew it (seconds), for whoever checks the axis: the page's tests.
        hooks: { draw: [(drawn) => void (element.dataset.xRange = `${drawn.scales.x!.min}..${drawn.scales.x!.max}`)] },
        axes: [{ space: 60, values: (_chart, ticks) => ticks.map((tick) => (tick % DAY_SECONDS === 0 ? dayOf(tick).slice(5) : '')) }, { label: 'calls' }],
        series: [
          { label: 'Day (UTC)', value: (_chart, value) => dayOf(value ?? xs[latest]!) },
          {
            label: 'calls per day',
            value: (_chart, value) => String(value ?? calls[latest]),
            stroke: '#0b5cad',
            fill: 'rgba(11, 92, 173, 0.25)',
            paths: uPlot.paths.bars?.({ size: [0.6, 40] }),
          },
        ],
      },
      [xs, calls],
      element,
    );
    // The chart follows its box: a phone turned, a window narrowed.
    const resized = new ResizeObserver(() => chart.setSize({ width: widthNow(), height: 220 }));
    resized.observe(element);
    return () => {
      resized.disconnect();
      chart.destroy();
    };
  }, [days]);
  return <div ref={container} role="img" aria-label={`Calls per day: ${days.map((entry) => `${entry.day} ${entry.calls}`).join(', ')}`} class="chart" />;
}
