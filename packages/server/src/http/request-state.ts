import type { Logger } from 'pino';
import type { Principal, RouteDefinition } from '@svc/schemas';
import type { ServerTiming } from './server-timing.ts';

/** What the middleware chain keeps on `ctx.state` for one request. */
export interface RequestState {
  requestId: string;
  startedAt: number;
  timing: ServerTiming;
  log: Logger;
  routeId?: string;
  route?: RouteDefinition;
  principal?: Principal;
}
