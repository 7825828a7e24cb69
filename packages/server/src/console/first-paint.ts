import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The server's first paint of a public page: packages/ui/src/first-paint.tsx, built by the
 * console's build into `console-render/first-paint.js` beside `console/`. Its HTML, or undefined
 * when the reads it needs were not all inlined (the page then paints once its script has read them).
 */
export type RenderFirstPaint = (relative: string, query: URLSearchParams, reads: Record<string, unknown>) => string | undefined;

/**
 * Loads the first paint's module when a public page is first asked for, not at start: it carries
 * Preact, micromark and the console's components (about 400 KB; some 400 ms to import on a loaded
 * machine), which a server nobody opens the console on never needs. Undefined when this build has
 * no such module (an older build, or one that failed): pages are then served without it, as before.
 */
export function firstPaintLoader(consoleDirectory: string): () => Promise<RenderFirstPaint | undefined> {
  const file = path.join(path.dirname(consoleDirectory), 'console-render', 'first-paint.js');
  let loading: Promise<RenderFirstPaint | undefined> | undefined;
  return () => {
    loading ??= existsSync(file)
      ? import(pathToFileURL(file).href).then(
          (module: { renderFirstPaint?: RenderFirstPaint }) => module.renderFirstPaint,
          () => undefined,
        )
      : Promise.resolve(undefined);
    return loading;
  };
}

/**
 * The first paint's HTML, or undefined when it cannot be drawn: rendering throws on a read the
 * page's components do not expect (an answer from a newer contract), and a page without a first
 * paint still works, its script reading what it needs.
 */
export function drawFirstPaint(
  render: RenderFirstPaint | undefined,
  relative: string,
  query: URLSearchParams,
  reads: Record<string, unknown>,
): string | undefined {
  if (!render) return undefined;
  try {
    return render(relative, query, reads);
  } catch {
    return undefined;
  }
}
