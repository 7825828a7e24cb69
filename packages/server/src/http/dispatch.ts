import { EventEmitter } from 'node:events';
import { parse as parseQuery } from 'node:querystring';
import type { Readable } from 'node:stream';
import type Koa from 'koa';
import type { Context } from 'koa';
import { inject } from 'light-my-request';
import { z } from 'zod';
import { fillPath, toSearchParams, type Principal, type RouteDefinition } from '@svc/schemas';
import { tracingOn } from '../observability/tracing.ts';
import { carryPrincipal, carryPrincipalInHeaders } from './auth.ts';
import { contractMiddlewareOf } from './build-app.ts';
import { bodyLimitOf, HELD_BODY, HELD_VALUE } from './read-body.ts';
import { traceRequest } from './request-trace.ts';

/** Who calls, as the outer request (an MCP or A2A call) knows them. */
export interface DispatchCaller {
  /** The caller's `Authorization` header, passed on unchanged: the route authenticates it exactly as REST does. */
  readonly authorization?: string | undefined;
  /**
   * The principal the outer request resolved from exactly this `authorization` (never from anything
   * else): a route served in process (callInProcess) takes it instead of resolving the credential a
   * second time, and checks its requirement on it as REST does. Set by svc's code only; a client
   * cannot send it (it travels on the in-process request object, under a module-private Symbol).
   */
  readonly principal?: Principal | undefined;
  /** The caller's address: per-IP limits count the call as theirs. */
  readonly ip: string;
  /** Aborting it aborts the route's work, as a REST client's disconnect does. */
  readonly signal?: AbortSignal;
  /**
   * The caller holds no credential, only the principal one resolved to when the work was asked
   * (an MCP task run on any replica, after its creator's request ended): `authorization` is a
   * placeholder, and `principal` is carried on both paths, emulated HTTP included.
   */
  readonly principalOnly?: boolean;
  /** More request headers (`idempotency-key`, `accept`, `x-request-id`); hop and address headers are not taken. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A route's input as the REST client sends it: path params, query, body (a JSON value, or bytes for a `bytes` route). */
export interface DispatchInput {
  readonly params?: Record<string, unknown>;
  readonly query?: Record<string, unknown>;
  readonly body?: unknown;
  /**
   * The body is part of a JSON text this server's body reader decoded and checked already (nesting
   * depth, strings no route may store): an MCP tool call's arguments. A JSON route served in process
   * then takes it as its decoded body, without encoding it to bytes and scanning and decoding them
   * again; its length against the route's cap is its JSON text's (or see `bodyBytesAtMost`).
   */
  readonly bodyChecked?: boolean;
  /**
   * With `bodyChecked`: the byte length of the JSON text the body is a part of (the MCP request's
   * own body). When that is within the route's cap, the body's text, a part of it, is too, and
   * the body's length is not worked out (its JSON text is never made); the route holds this many
   * bytes of its body budget. Past the cap, the length of the body's own JSON text decides.
   */
  readonly bodyBytesAtMost?: number | undefined;
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

/**
 * The request of an in-process call: its headers, its body held in memory (read-body.ts takes it
 * from here, as HELD_BODY or, decoded already, HELD_VALUE), and a socket that is never a real one.
 * No stream: only routes with a JSON body run in process (answersJsonOnly), and the body reader
 * takes those from the fields, so a Readable's state would be built for nothing on every call.
 */
class InProcessRequest extends EventEmitter {
  readonly headers: Record<string, string>;
  readonly method: string;
  readonly url: string;
  readonly socket: { destroyed: boolean; remoteAddress: string; setNoDelay: () => void; destroy: () => void };
  /** The body is all here: nothing is still arriving (linger.ts reads it). */
  readonly complete = true;
  readonly readableEnded = true;
  /** A JSON body, read from here by read-body.ts. */
  readonly [HELD_BODY]: Buffer | undefined;
  /** A JSON body already decoded (DispatchInput.bodyChecked), taken by read-body.ts as it is. */
  readonly [HELD_VALUE]: { value: unknown } | undefined;
  private closed = false;

  constructor(method: string, url: string, headers: Record<string, string>, ip: string, payload: Buffer | undefined, decoded?: { value: unknown }) {
    super();
    this.method = method;
    this.url = url;
    this.headers = headers;
    this.socket = { destroyed: false, remoteAddress: ip, setNoDelay: () => {}, destroy: () => this.destroy() };
    if (decoded !== undefined) this[HELD_VALUE] = decoded;
    else if (payload !== undefined) this[HELD_BODY] = payload;
  }

  /** As a socket's request: 'close' once. */
  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }
}

/** The response of an in-process call: what the route sets, kept; 'finish' and 'close' when the answer is taken, as a socket's. */
class InProcessResponse extends EventEmitter {
  statusCode = 404;
  headersSent = false;
  writableFinished = false;
  closed = false;
  readonly headers: Record<string, string | string[] | number> = {};

  setHeader(name: string, value: string | string[] | number): this {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  getHeader(name: string): string | string[] | number | undefined {
    return this.headers[name.toLowerCase()];
  }
  hasHeader(name: string): boolean {
    return name.toLowerCase() in this.headers;
  }
  removeHeader(name: string): void {
    delete this.headers[name.toLowerCase()];
  }
  /** The caller left: the route hears a disconnect. */
  destroy(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }
  /** The answer was taken: places held for the request are given back. */
  finish(): void {
    if (this.closed) return;
    this.writableFinished = true;
    this.emit('finish');
    this.closed = true;
    this.emit('close');
  }
}

/**
 * The part of Koa's context the contract middleware and the adapter use (build-app.ts,
 * mount-contract.ts, respond.ts' JSON answers, error-handler.ts, key-limits.ts), over the
 * in-process request and response: the route runs the REST code itself, without an HTTP request
 * to parse and an HTTP response to write and read back.
 */
class InProcessContext {
  readonly req: InProcessRequest;
  readonly res: InProcessResponse;
  readonly state: Record<string, unknown> = {};
  readonly method: string;
  readonly path: string;
  readonly querystring: string;
  readonly ip: string;
  body: unknown;
  respond = true;

  constructor(req: InProcessRequest, res: InProcessResponse, ip: string) {
    this.req = req;
    this.res = res;
    this.method = req.method;
    const mark = req.url.indexOf('?');
    this.path = mark < 0 ? req.url : req.url.slice(0, mark);
    this.querystring = mark < 0 ? '' : req.url.slice(mark + 1);
    this.ip = ip;
  }
  /** As Koa's: the query string parsed by node:querystring. */
  get query(): Record<string, unknown> {
    return parseQuery(this.querystring);
  }
  get headers(): Record<string, string> {
    return this.req.headers;
  }
  get headerSent(): boolean {
    return false;
  }
  get status(): number {
    return this.res.statusCode;
  }
  set status(code: number) {
    this.res.statusCode = code;
  }
  get(name: string): string {
    return this.req.headers[name.toLowerCase()] ?? '';
  }
  set(name: string, value: string): void {
    this.res.setHeader(name, value);
  }
  remove(name: string): void {
    this.res.removeHeader(name);
  }
  /** As Koa's: adds a field to `Vary` once. */
  vary(field: string): void {
    const fields = String(this.res.getHeader('vary') ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    if (!fields.includes(field)) this.res.setHeader('vary', [...fields, field].join(', '));
  }
}

/**
 * A route served in process without HTTP emulation: its every answer is JSON (or an error, which
 * is JSON) and its body, if any, is JSON. Other routes (event streams, bytes, forms, text) go
 * through the app with a synthesized HTTP request.
 */
function answersJsonOnly(route: RouteDefinition): boolean {
  if (route.body && (route.bodyEncoding ?? 'json') !== 'json') return false;
  return Object.values(route.responses).every((spec) => spec instanceof z.ZodType);
}

/** Whether an object has an own enumerable member, without allocating a key list. */
export function hasMembers(value: Record<string, unknown> | undefined): boolean {
  for (const _ in value) return true;
  return false;
}

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
 * Runs a contract route in-process through the very app that serves it over HTTP: request id,
 * route match, authentication, validation, admission, body limits, the handler (funding, limits),
 * the error body, metrics and the log line are the REST ones, not a copy, carrying the caller's
 * credential and address, so an MCP tool or an A2A skill answers exactly what the REST route
 * answers.
 *
 * A route whose answers are all JSON runs the app's contract middleware directly on an in-process
 * context (callInProcess): no HTTP request is synthesized, parsed, answered and read back, which
 * cost ten times the dispatch itself (bench:mcp). Other routes (event streams, bytes, text, forms)
 * and streamed calls go through the app's HTTP handler with a synthesized request
 * (light-my-request).
 *
 * The features are built before the apps, so the server attaches the apps once it has them; a
 * call before that is a programming error.
 */
export class ContractDispatch {
  private base: Listener | undefined;
  private api: Listener | undefined;
  private baseMiddleware: ((ctx: Context) => Promise<void>) | undefined;
  private apiMiddleware: ((ctx: Context) => Promise<void>) | undefined;
  /** Routes served in process without HTTP emulation (answersJsonOnly), decided once per route. */
  private readonly jsonOnly = new WeakMap<RouteDefinition, boolean>();

  #markAttached: () => void = () => {};
  /** Settles once the server attached its apps: work started before (a task claimed at start-up) waits for it. */
  readonly attached: Promise<void> = new Promise((resolve) => {
    this.#markAttached = resolve;
  });

  /** Called by the server once its apps exist; `api` only when the api surface listens on its own port. */
  attach(apps: { base: Koa; api?: Koa | undefined }): void {
    this.base = completeOnEnd(apps.base.callback() as Listener);
    this.api = apps.api ? completeOnEnd(apps.api.callback() as Listener) : this.base;
    this.baseMiddleware = contractMiddlewareOf(apps.base);
    this.apiMiddleware = apps.api ? contractMiddlewareOf(apps.api) : this.baseMiddleware;
    this.#markAttached();
  }

  /** Calls `route` with `input` as `caller`; answers the REST status, headers and body. Never throws for an error status. */
  async call(route: RouteDefinition, input: DispatchInput, caller: DispatchCaller, options: { stream?: boolean } = {}): Promise<DispatchAnswer> {
    const listener = route.surface === 'api' ? this.api : this.base;
    if (!listener) throw new Error('ContractDispatch.call before the server attached its apps');
    const headers: Record<string, string> = {};
    const passed = caller.headers;
    if (passed) {
      for (const name in passed) {
        const lower = name.toLowerCase();
        if (!NOT_PASSED_ON.has(lower)) headers[lower] = passed[name]!;
      }
    }
    if (caller.authorization) headers.authorization = caller.authorization;
    // A path without parameters and an empty query (most tool calls) cost no replace and no URLSearchParams.
    const path = route.path.includes(':') || route.path.includes('*') ? fillPath(route.path, input.params) : route.path;
    const url = hasMembers(input.query) ? `${path}${toSearchParams(input.query)}` : path;
    const middleware = route.surface === 'api' ? this.apiMiddleware : this.baseMiddleware;
    let jsonOnly = this.jsonOnly.get(route);
    if (jsonOnly === undefined) this.jsonOnly.set(route, (jsonOnly = answersJsonOnly(route)));
    const inProcess = middleware !== undefined && jsonOnly && !options.stream;
    if (inProcess && input.bodyChecked && input.body !== undefined) {
      // Decoded already: only a length is needed (the route's cap, its body budget), the bound
      // when it is within the cap, else the length of the body's own JSON text.
      const { bodyBytesAtMost } = input;
      const bytes = bodyBytesAtMost !== undefined && bodyBytesAtMost <= bodyLimitOf(route) ? bodyBytesAtMost : Buffer.byteLength(JSON.stringify(input.body));
      headers['content-type'] = 'application/json';
      return callInProcess(middleware, route, url, headers, undefined, caller, { value: input.body, bytes });
    }
    const { payload, contentType } = requestBodyOf(route, input.body);
    if (contentType) headers['content-type'] = contentType;
    if (inProcess) return callInProcess(middleware, route, url, headers, payload, caller, undefined);
    const release = caller.principalOnly && caller.principal && caller.authorization ? carryPrincipalInHeaders(headers, caller.principal) : undefined;
    try {
      return await this.inject(listener, route, url, headers, payload, caller, options);
    } finally {
      release?.();
    }
  }

  private async inject(
    listener: Listener,
    route: RouteDefinition,
    url: string,
    headers: Record<string, string>,
    payload: string | Buffer | undefined,
    caller: DispatchCaller,
    options: { stream?: boolean },
  ): Promise<DispatchAnswer> {
    const response = await inject(listener, {
      method: route.method,
      url,
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

/**
 * Runs the app's contract middleware (request id, route match, authentication, validation, limits,
 * admission, the handler, the error body, metrics and the log line) on an in-process context, and
 * answers what it set: the same status, headers and JSON text an HTTP caller gets, with no request
 * to parse and no response to write and read back.
 */
async function callInProcess(
  middleware: (ctx: Context) => Promise<void>,
  route: RouteDefinition,
  url: string,
  headers: Record<string, string>,
  payload: string | Buffer | undefined,
  caller: DispatchCaller,
  decoded: { value: unknown; bytes: number } | undefined,
): Promise<DispatchAnswer> {
  let req: InProcessRequest;
  if (decoded !== undefined) {
    headers['content-length'] = String(decoded.bytes);
    req = new InProcessRequest(route.method, url, headers, caller.ip, undefined, decoded);
  } else {
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    if (bytes !== undefined) headers['content-length'] = String(bytes.length);
    req = new InProcessRequest(route.method, url, headers, caller.ip, bytes);
  }
  if (caller.principal && caller.authorization) carryPrincipal(req, caller.principal);
  const res = new InProcessResponse();
  const ctx = new InProcessContext(req, res, caller.ip);
  const { signal } = caller;
  const leave = () => {
    req.socket.destroyed = true;
    res.destroy();
  };
  if (signal?.aborted) leave();
  else signal?.addEventListener('abort', leave, { once: true });
  try {
    // While tracing is on, the call has its own request span, as the app's HTTP requests do.
    const run = () => middleware(ctx as unknown as Context);
    await (tracingOn() ? traceRequest(ctx as unknown as Context, run) : run());
  } finally {
    signal?.removeEventListener('abort', leave);
    res.finish();
  }
  const { body } = ctx;
  const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : body === undefined || body === null ? '' : String(body);
  return new InProcessAnswer(res.statusCode, res.headers, text);
}

/** An in-process answer: its JSON is decoded when first read (an MCP tool call's fast path passes the text on as it is). */
class InProcessAnswer implements DispatchAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | number>;
  readonly text: string;
  readonly stream = undefined;
  private decoded: unknown;
  private isDecoded = false;

  constructor(status: number, headers: Record<string, string | string[] | number>, text: string) {
    this.status = status;
    this.headers = headers;
    this.text = text;
  }

  get json(): unknown {
    if (!this.isDecoded) {
      this.isDecoded = true;
      this.decoded = String(this.headers['content-type'] ?? '').includes('json') && this.text ? JSON.parse(this.text) : undefined;
    }
    return this.decoded;
  }
}
