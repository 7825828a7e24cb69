import { z } from 'zod';

/** `SVC_UI`: `on` (default) serves the web console at /ui/; `off` leaves /ui/ unrouted (404). */
export const consoleConfigFrom = z
  .object({
    SVC_UI: z.enum(['on', 'off'], { error: 'expected on or off' }).default('on'),
  })
  .transform((env) => ({ enabled: env.SVC_UI === 'on' }));
