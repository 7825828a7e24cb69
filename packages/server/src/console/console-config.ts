import { z } from 'zod';
import { integer } from '../env-values.ts';

/**
 * `SVC_UI`: `on` (default) serves the web console at /ui/; `off` leaves /ui/ unrouted (404).
 * `SVC_UI_FIRST_PAINT_MS`: how long a public page waits for its first paint to be drawn in the
 * worker thread (first-paint.ts) before it is served without one.
 */
export const consoleConfigFrom = z
  .object({
    SVC_UI: z.enum(['on', 'off'], { error: 'expected on or off' }).default('on'),
    SVC_UI_FIRST_PAINT_MS: integer(1, 10_000, 'milliseconds').default(200),
  })
  .transform((env) => ({ enabled: env.SVC_UI === 'on', firstPaintMs: env.SVC_UI_FIRST_PAINT_MS }));
