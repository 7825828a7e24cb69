import type { Readable } from 'node:stream';
import type Koa from 'koa';
import { inject } from 'light-my-request';
import { fillPath, toSearchParams, type RouteDefinition } from '@svc/schemas';

/** Who calls, as the outer request (an MCP or A2A call) knows them. */
export interface DispatchCaller {
  /** The caller's `Authorization` header, passed on unchanged: the route authenticates it exactly as REST does. */
  readonly authorization?: string | undefined;
  /** The caller's address: per-IP limits count the call as theirs. */
  readonly ip: string;
  /** Aborting it aborts the route's work, as a REST client's disconnect does. */
  readonly signal?: AbortSignal;
  /** More request headers (`idempotency-key`, `accept`, `x-request-id`); hop and address headers are not taken. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A route's input as the REST client sends it: path params, query, body (a JSON value, or bytes for a `bytes` route). */
export interface DispatchInput {
  readonly params?: Record<string, unknown>;
  readonly query?: Record<string, unknown>;
  readonly body?: unknown;
}

/** The REST answer, byte for byte what an HTTP caller of the route gets. */
export interface DispatchAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  /** The body as text; empty when the answer was asked for as a stream. */
  readonly text: string;
  /** The body decoded when the answer is JSON; undefined otherwise. */
  readonly json: unknown;
  /** With `{ stream: true }`: the body as it is written (an event stream arrives event by event). */
  readonly stream: Readable | undefined;
}

type Listener = (req: unknown, res: unknown) => void;

/**
 * A synthesized request does not set Node's `complete` flag when its body has been read; the app
 * reads it (lingerOnUnreadBody) to know whether a body is still arriving, so it is set here.
 */
function completeOnEnd(listener: Listener): Listener {
  return (req, res) => {
    (req as NodeJS.EventEmitter).once('end', () => {
      (req as { complete: boolean }).complete = true;
    });
    // The caller's abort is a disconnect: the app hears one as its response closing (the
    // handler's abort signal), which a synthesized request's own destruction does not give.
    const signal = (req as { _lightMyRequest?: { signal?: AbortSignal } })._lightMyRequest?.signal;
    signal?.addEventListener('abort', () => (res as { destroy(): void }).destroy(), { once: true });
    // An event stream asks its socket for no delay (respond.ts); the synthesized socket has no Nagle to turn off.
    // An early answer lingers on the unread body and may cut the connection (linger.ts): here that ends the request.
    const socket = (req as { socket?: { setNoDelay?: unknown; destroy?: unknown } }).socket;
    if (socket && typeof socket.setNoDelay !== 'function') socket.setNoDelay = () => socket;
    if (socket && typeof socket.destroy !== 'function') socket.destroy = () => (req as { destroy(): void }).destroy();
    listener(req, res);
  };
}

/** Headers a caller may not pass on: framing is the dispatcher's, the address is `caller.ip`. */
const NOT_PASSED_ON = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'forwarded',
]);

function requestBodyOf(route: RouteDefinition, body: unknown): { payload?: string | Buffer; contentType?: string } {
  if (body === undefined) return {};
  if (route.bodyEncoding === 'bytes') {
    const bytes = body instanceof Uint8Array ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : Buffer.from(String(body));
    return { payload: bytes, contentType: route.bodyMediaTypes?.[0] ?? 'application/octet-stream' };
  }
  if (route.bodyEncoding === 'form')
    return { payload: toSearchParams(body as Record<string, unknown>).slice(1), contentType: 'application/x-www-form-urlencoded' };
  return { payload: JSON.stringify(body), contentType: 'application/json' };
}

/**
 * Runs a contract route in-process through the very Koa app that serves it over HTTP: request
 * id, route match, authentication, validation, admission, body limits, the handler (funding,
 * limits), the error body, metrics and the log line are the REST ones, not a copy. The request is
 * a synthesized one (light-my-request) carrying the caller's credential and address, so an MCP
 * tool or an A2A skill answers exactly what the REST route answers.
 *
 * The features are built before the apps, so the server attaches the apps once it has them; a
 * call before that is a programming error.
 */
export class ContractDispatch {
  private base: Listener | undefined;
  private api: Listener | undefined;

  /** Called by the server once its apps exist; `api` only when the api surface listens on its own port. */
  attach(apps: { base: Koa; api?: Koa | undefined }): void {
    this.base = completeOnEnd(apps.base.callback() as Listener);
    this.api = apps.api ? completeOnEnd(apps.api.callback() as Listener) : this.base;
  }

  /** Calls `route` with `input` as `caller`; answers the REST status, headers and body. Never throws for an error status. */
  async call(route: RouteDefinition, input: DispatchInput, caller: DispatchCaller, options: { stream?: boolean } = {}): Promise<DispatchAnswer> {
    const listener = route.surface === 'api' ? this.api : this.base;
    if (!listener) throw new Error('ContractDispatch.call before the server attached its apps');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(caller.headers ?? {})) if (!NOT_PASSED_ON.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
    if (caller.authorization) headers.authorization = caller.authorization;
    const { payload, contentType } = requestBodyOf(route, input.body);
    if (contentType) headers['content-type'] = contentType;
    const response = await inject(listener, {
      method: route.method,
      url: `${fillPath(route.path, input.params)}${toSearchParams(input.query)}`,
      headers,
      remoteAddress: caller.ip,
      // The options are built here, always well-formed: skip light-my-request's per-call schema check.
      validate: false,
      ...(payload !== undefined ? { payload } : {}),
      ...(caller.signal ? { signal: caller.signal } : {}),
      ...(options.stream ? { payloadAsStream: true } : {}),
    });
    const type = String(response.headers['content-type'] ?? '');
    if (options.stream) return { status: response.statusCode, headers: response.headers, text: '', json: undefined, stream: response.stream() };
    const text = response.payload;
    return {
      status: response.statusCode,
      headers: response.headers,
      text,
      json: type.includes('json') && text ? JSON.parse(text) : undefined,
      stream: undefined,
    };
  }
}
