import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** Calls per UTC day as a bar chart, drawn by uPlot (canvas, about 20 KB gzipped, loaded with this page only). */
export function CallsPerDayChart({ days }: { days: Array<{ day: string; calls: number }> }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!container.current || days.length === 0) return;
    const element = container.current;
    const widthNow = () => Math.max(200, Math.min(900, element.clientWidth));
    const chart = new uPlot(
      {
        width: widthNow(),
        height: 220,
        // A day either side, so one day of usage is a bar and not a year-wide axis.
        scales: { x: { time: true, range: (_chart, min, max) => [min - 86_400, max + 86_400] } },
        axes: [{}, { label: 'calls' }],
        series: [{}, { label: 'calls per day', stroke: '#0b5cad', fill: 'rgba(11, 92, 173, 0.25)', paths: uPlot.paths.bars?.({ size: [0.6, 40] }) }],
      },
      [days.map((entry) => Date.parse(`${entry.day}T00:00:00Z`) / 1000), days.map((entry) => entry.calls)],
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
