import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Principal, RouteDefinition } from '@svc/schemas';
import { ServerTiming } from './server-timing.ts';

/**
 * What the middleware chain keeps for one request. A class with prototype getters, so the
 * per-request object stays small and the logger and timing are only made when used.
 */
export class RequestState {
  readonly requestId: string;
  readonly startedAt: number;
  routeId: string | undefined;
  route: RouteDefinition | undefined;
  principal: Principal | undefined;
  /**
   * Work this request started that outlives its answer (a background response): the request's
   * key-limit holds (its concurrency lease, its token reservations) last until each has settled,
   * so work answered at once still counts as in flight. Set through `outliveRequest`.
   */
  outliving: Promise<unknown>[] | undefined;
  private readonly baseLog: Logger;
  private childLog: Logger | undefined;
  private phases: ServerTiming | undefined;

  constructor(requestId: string, baseLog: Logger) {
    this.requestId = requestId;
    this.startedAt = performance.now();
    this.baseLog = baseLog;
  }

  get log(): Logger {
    return (this.childLog ??= this.baseLog.child({ requestId: this.requestId }));
  }

  get timing(): ServerTiming {
    return (this.phases ??= new ServerTiming());
  }

  get hasTiming(): boolean {
    return this.phases !== undefined && this.phases.size > 0;
  }
}

/** The request's state; set by the request lifecycle middleware, first in the chain. */
export function requestState(ctx: Context): RequestState {
  return (ctx.state as { svc: RequestState }).svc;
}
