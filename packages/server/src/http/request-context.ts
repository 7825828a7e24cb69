import type { Logger } from 'pino';
import type { Principal } from '@svc/schemas';
import type { RowScope } from './everyone-view.ts';
import type { ServerTiming } from './server-timing.ts';

/** What a handler knows of its request besides the validated input. No Koa types leak here. */
export interface RequestContext {
  readonly requestId: string;
  /** The request method; `HEAD` reaches GET handlers, which must then have no side effects. */
  readonly method: string;
  /** The caller's address (X-Forwarded-For only when SVC_TRUST_PROXY is set). */
  readonly ip: string;
  readonly principal: Principal;
  /** The raw bearer when one was sent; the blackboard hashes it, nothing else should need it. */
  readonly bearer: string | undefined;
  /** Aborts when the client goes away. */
  readonly signal: AbortSignal;
  readonly timing: ServerTiming;
  readonly log: Logger;
  /** Absolute URL of the surface the request came in on, for links in answers. */
  readonly publicUrl: string;
  /** Headers of the request, lower-cased names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Whose rows a list shows: everyone's when the route's operator view was asked for (and allowed), else the caller's. */
  readonly rows: RowScope;
}
