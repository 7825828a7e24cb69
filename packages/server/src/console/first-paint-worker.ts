import { workerData } from 'node:worker_threads';
import type { FirstPaintTask, RenderFirstPaint } from './first-paint.ts';

/**
 * The thread that draws the console's first paints (first-paint.ts). The render module (Preact,
 * micromark and the console's components, about 400 KB) is imported here as the thread starts,
 * before Piscina counts the thread ready, so neither its import nor any page's drawing runs on
 * the server's event loop.
 */
const { renderFirstPaint } = (await import((workerData as { renderModule: string }).renderModule)) as { renderFirstPaint: RenderFirstPaint };

/**
 * A page's first paint, or undefined: rendering throws on a read the page's components do not
 * expect (an answer from a newer contract), and a page without a first paint still works.
 */
export default function drawFirstPaintTask(task: FirstPaintTask): string | undefined {
  try {
    return renderFirstPaint(task.relative, new URLSearchParams(task.query), task.reads);
  } catch {
    return undefined;
  }
}
