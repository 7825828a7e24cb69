import { useLayoutEffect } from 'preact/hooks';

/** The element the server drew a public page's content in (packages/server/src/console/serve-console.ts, first-paint.tsx). */
const FIRST_PAINT = 'first-paint';

/**
 * The app takes the page over from the server's first paint. Until then the first paint is what
 * is on screen and the app is hidden (styles.css), so the reader never sees the app's "Loading…"
 * in place of content that was already there.
 */
export function dropFirstPaint(): void {
  document.getElementById(FIRST_PAINT)?.remove();
}

/**
 * Drops the first paint once the page shows its own content (`ready`): in a layout effect, so
 * the swap happens before the browser paints again and nothing flickers.
 */
export function useFirstPaintHandover(ready: boolean): void {
  useLayoutEffect(() => {
    if (ready) dropFirstPaint();
  }, [ready]);
}
