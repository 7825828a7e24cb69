import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { workerModuleUrl } from '../worker-modules.ts';

/**
 * The server's first paint of a public page: packages/ui/src/first-paint.tsx, built by the
 * console's build into `console-render/first-paint.js` beside `console/`. Its HTML, or undefined
 * when the reads it needs were not all inlined or pass its budget (the page then paints once its
 * script has read them).
 */
export type RenderFirstPaint = (relative: string, query: URLSearchParams, reads: Record<string, unknown>) => string | undefined;

/** What the main thread sends the drawing thread: the page's path under /ui/, its query, and the answers read for it. */
export interface FirstPaintTask {
  relative: string;
  query: string;
  reads: Record<string, unknown>;
}

export interface FirstPaint {
  /** The page's first paint, or undefined when it is not drawn within the deadline (or cannot be drawn at all). */
  draw(relative: string, query: URLSearchParams, reads: Record<string, unknown>): Promise<string | undefined>;
  close(): Promise<void>;
}

/** The drawing thread's heap: a page's reads are at most the data block's 1 MiB, and a drawing of them a few times that. */
const WORKER_HEAP_MB = 128;
/** Pages waiting for the thread past this many are served without a first paint at once rather than queued. */
const MAX_WAITING = 16;

/**
 * Draws public pages' first paints in one worker thread, under a deadline (the bounded-work rule:
 * a caller chooses the posts and README drawn). The thread imports the render module as it starts
 * (Preact, micromark and the console's components, about 400 KB: 0.5 s of CPU at load 19), so the
 * event loop never pays for it. It starts on the first public page asked for, not with the server:
 * a server nobody opens the console on (every test server, a gateway behind an API) never pays for
 * it either, and that first page is served without its first paint if the thread is not ready by
 * its deadline. A page not drawn within `deadlineMs` (its wait included) is served without its
 * first paint, as a browser-drawn page was before; a drawing still running then is stopped by
 * ending its thread, and Piscina starts another. Undefined when this build has no render module
 * (an older build, or one that failed): pages are served without it.
 */
export function startFirstPaint(
  consoleDirectory: string,
  deadlineMs: number,
  workerModule: URL = workerModuleUrl('first-paint-worker'),
): FirstPaint | undefined {
  const file = path.join(path.dirname(consoleDirectory), 'console-render', 'first-paint.js');
  if (!existsSync(file)) return undefined;
  let pool: Piscina | undefined;
  let broken = false;
  const started = () => {
    if (pool) return pool;
    const starting = new Piscina({
      filename: workerModule.href,
      workerData: { renderModule: pathToFileURL(file).href },
      // One thread, kept once started: on 2 cores the other stays with the event loop, and a thread
      // started again for a later page would miss that page's deadline.
      minThreads: 1,
      maxThreads: 1,
      idleTimeout: Number.POSITIVE_INFINITY,
      maxQueue: MAX_WAITING,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: 4 },
    });
    // A thread that fails outside a page (its module does not load) would fail every one after it.
    starting.on('error', () => {
      broken = true;
      starting.destroy().catch(() => {});
    });
    pool = starting;
    return starting;
  };
  return {
    async draw(relative, query, reads) {
      if (broken) return undefined;
      const task: FirstPaintTask = { relative, query: query.toString(), reads };
      try {
        return (await started().run(task, { signal: AbortSignal.timeout(deadlineMs) })) as string | undefined;
      } catch {
        return undefined;
      }
    },
    close: async () => {
      await pool?.destroy();
    },
  };
}
