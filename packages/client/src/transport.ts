import ky, { isHTTPError, isNetworkError, isTimeoutError } from 'ky';
import { z } from 'zod';
import { retryableStatusesFor, type RouteDefinition } from '@svc/schemas/core';
import { ConnectionError, errorFromResponse, SvcError, TimeoutError } from './errors.ts';
import { fillPath, toSearchParams } from './path.ts';
import { readSse } from './sse.ts';
import { idleTimeoutOf, withIdleTimeoutResponse } from './stream-idle.ts';
import type { StoragePolicy } from './catalog/storage-policy.ts';

export interface RetryOptions {
  /** Retries after the first try (default 2). */
  limit?: number;
  /** Longest wait a `Retry-After` may impose, in ms (default 60 000); longer waits fail at once. */
  maxRetryAfterMs?: number;
}

export interface ClientOptions {
  /** Base surface, e.g. `http://127.0.0.1:8787`. Defaults to `SVC_BASE_URL`, then that address. */
  baseUrl?: string;
  /** Api surface (blackboard, catalog). Defaults to `SVC_API_URL`, then the base URL. */
  apiUrl?: string;
  /** Bearer token or developer key, or a function that returns the current one. Defaults to `SVC_TOKEN`. */
  token?: string | (() => string | undefined | Promise<string | undefined>);
  /** Per-try timeout in ms (default 60 000): until the answer's headers arrive. */
  timeout?: number;
  /**
   * How long a streamed read (an event stream such as a chat answer or the board's push stream,
   * a verified download's body, the body of a byte answer a method hands back as a `Response`,
   * such as `catalog.storageObject` or a CSV export) may go without a byte before it fails with StreamIdleTimeoutError
   * (`stream_idle_timeout`), in ms (default 60 000; 0 turns it off). The board's `watch()`
   * reconnects instead. The server sends a keep-alive comment every 15 s, so only a peer that has
   * stopped sending without closing trips it.
   */
  streamIdleTimeout?: number;
  /** Retries on 408, 429 and 5xx, and on connection failures; a number is the limit. */
  retry?: number | RetryOptions;
  /** A fetch implementation (tests, proxies, instrumentation). */
  fetch?: typeof globalThis.fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /**
   * Called once when a request is answered 401; return a fresh token to retry with it
   * (the identity helpers use this to refresh an expired access token). It receives the token
   * the refused request carried, so a refresh already done by a parallel request is not repeated.
   */
  onUnauthorized?: (refusedToken: string | undefined) => Promise<string | undefined>;
  /**
   * Where verified downloads may fetch bytes (default: HTTPS on storage.googleapis.com and its
   * subdomains only). `SVC_STORAGE_HOSTS` (comma-separated) adds hosts too.
   */
  storagePolicy?: StoragePolicy;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeout?: number;
  /** This call's stream idle timeout in ms (see ClientOptions.streamIdleTimeout). */
  streamIdleTimeout?: number;
  headers?: Record<string, string>;
  /** Sent as `Idempotency-Key`; one is generated for retried non-GET requests when absent. */
  idempotencyKey?: string;
  retry?: number | RetryOptions;
}

export interface RequestInput {
  params?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, string | undefined>;
  body?: unknown;
}

const env = (name: string): string | undefined => (typeof process !== 'undefined' ? process.env?.[name] || undefined : undefined);
const trimSlash = (url: string) => url.replace(/(?<!\/)\/+$/, '');

/** Resolved connection settings, environment defaults applied. */
export interface ResolvedOptions extends ClientOptions {
  baseUrl: string;
  apiUrl: string;
}

/** What the system said of a failed connection, e.g. `connection refused (ECONNREFUSED)`. */
const SYSTEM_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
};

/**
 * Why a request never got an answer. fetch says only `fetch failed`; the reason is in its cause
 * chain (a system error, or an AggregateError when every address of `localhost` refused), so the
 * deepest error with a code names it.
 */
export function networkFailure(error: unknown): string {
  let deepest: { message: string; code?: string } | undefined;
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    const candidate = value as { message?: unknown; code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof candidate.code === 'string' && typeof candidate.message === 'string') deepest = { message: candidate.message, code: candidate.code };
    // A deeper message is the more specific one (ky's `Request failed due to a network error`
    // wraps fetch's `fetch failed`, which wraps undici's reason, e.g. `bad port`), unless a coded one was found.
    else if (!deepest?.code && typeof candidate.message === 'string' && candidate.message !== 'fetch failed') deepest = { message: candidate.message };
    if (Array.isArray(candidate.errors)) candidate.errors.slice(0, 1).forEach(visit);
    visit(candidate.cause);
  };
  visit(error);
  if (!deepest) return (error as Error | undefined)?.message ?? String(error);
  const known = deepest.code ? SYSTEM_ERRORS[deepest.code] : undefined;
  if (known) return `${known} (${deepest.code})`;
  return deepest.code ? `${deepest.message} (${deepest.code})` : deepest.message;
}

export function resolveOptions(options: ClientOptions = {}): ResolvedOptions {
  const baseUrl = trimSlash(options.baseUrl ?? env('SVC_BASE_URL') ?? 'http://127.0.0.1:8787');
  const apiUrl = trimSlash(options.apiUrl ?? env('SVC_API_URL') ?? baseUrl);
  return { ...options, baseUrl, apiUrl, token: options.token ?? env('SVC_TOKEN') };
}

function retrySettings(retry: number | RetryOptions | undefined) {
  const normalised = typeof retry === 'number' ? { limit: retry } : (retry ?? {});
  return { limit: normalised.limit ?? 2, maxRetryAfterMs: normalised.maxRetryAfterMs ?? 60_000 };
}

function encodeBody(route: RouteDefinition, body: unknown): { body?: BodyInit; contentType?: string; replayable: boolean } {
  if (body === undefined) return { replayable: true };
  switch (route.bodyEncoding ?? 'json') {
    case 'bytes': {
      const contentType = route.bodyMediaTypes?.[0] ?? 'application/octet-stream';
      return { body: body as BodyInit, contentType, replayable: !(body instanceof ReadableStream) };
    }
    case 'form':
      return {
        body: new URLSearchParams(
          Object.entries(body as Record<string, unknown>)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, String(v)]),
        ),
        replayable: true,
      };
    default:
      return { body: JSON.stringify(body), contentType: 'application/json', replayable: true };
  }
}

/** Milliseconds a `Retry-After` asks for (delay seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

export interface RawResult<T> {
  data: T;
  response: Response;
}

/**
 * The one request loop: builds the URL from the contract entry, authenticates, retries what is
 * safe to retry, maps failures to typed errors, and decodes the answer the way the contract says.
 */
export class Transport {
  readonly options: ResolvedOptions;

  constructor(options: ResolvedOptions) {
    this.options = options;
  }

  url(route: RouteDefinition, input: RequestInput = {}): string {
    const root = route.surface === 'api' ? this.options.apiUrl : this.options.baseUrl;
    return `${root}${fillPath(route.path, input.params)}${toSearchParams(input.query)}`;
  }

  private async token(): Promise<string | undefined> {
    const { token } = this.options;
    return typeof token === 'function' ? await token() : token;
  }

  async request<T = unknown>(route: RouteDefinition, input: RequestInput = {}, call: CallOptions = {}, retriedAuth = false): Promise<RawResult<T>> {
    const url = this.url(route, input);
    const encoded = encodeBody(route, input.body);
    const retry = retrySettings(call.retry ?? this.options.retry);
    const headers = new Headers(this.options.headers);
    for (const [name, value] of Object.entries(input.headers ?? {})) if (value !== undefined) headers.set(name, value);
    for (const [name, value] of Object.entries(call.headers ?? {})) headers.set(name, value);
    if (encoded.contentType) headers.set('content-type', encoded.contentType);
    const token = await this.token();
    if (token && !headers.has('authorization')) headers.set('authorization', `Bearer ${token}`);
    // One key per logical request, reused by every retry: a route that honours it answers a retried POST with the first answer.
    const idempotencyKey =
      call.idempotencyKey ?? headers.get('idempotency-key') ?? (route.method !== 'GET' && retry.limit > 0 ? crypto.randomUUID() : undefined);
    if (idempotencyKey) headers.set('idempotency-key', idempotencyKey);
    const retryStatuses = retryableStatusesFor(route);
    const isRedirect = Object.values(route.responses).some((spec) => !(spec instanceof z.ZodType) && spec.kind === 'redirect');

    // Breaking out of an event stream must abort the request, so streams get their own controller.
    const streamAbort = new AbortController();
    const signal = call.signal ? AbortSignal.any([call.signal, streamAbort.signal]) : streamAbort.signal;
    let response: Response;
    try {
      response = await ky(url, {
        method: route.method,
        headers,
        body: encoded.body,
        signal,
        timeout: call.timeout ?? this.options.timeout ?? 60_000,
        fetch: this.options.fetch,
        redirect: isRedirect ? 'manual' : 'follow',
        throwHttpErrors: (status) => status >= 400,
        retry: {
          limit: encoded.replayable ? retry.limit : 0,
          methods: ['get', 'head', 'put', 'delete', 'options', 'post', 'patch'],
          // The contract's one list: a 500 only where a repeat cannot count twice.
          statusCodes: [...retryStatuses],
          // Any retryable answer may say when to come back (a 408 or 504 from a busy server too).
          afterStatusCodes: [...retryStatuses],
          maxRetryAfter: retry.maxRetryAfterMs,
          // ky would cap a long Retry-After and retry early, which the server just refused; give up at once instead.
          shouldRetry: ({ error }: { error: Error }) => {
            if (!isHTTPError(error)) return undefined;
            const wait = retryAfterMs(error.response.headers);
            return wait !== undefined && wait > retry.maxRetryAfterMs ? false : undefined;
          },
          backoffLimit: 8_000,
          delay: (attempt) => 500 * 2 ** (attempt - 1),
          jitter: true,
        },
        ...(encoded.body instanceof ReadableStream ? { duplex: 'half' } : {}),
      } as Parameters<typeof ky>[1]);
    } catch (error) {
      if (isHTTPError(error)) {
        if (error.response.status === 401 && !retriedAuth && this.options.onUnauthorized) {
          const fresh = await this.options.onUnauthorized(headers.get('authorization')?.replace(/^Bearer\s+/i, ''));
          if (fresh) return this.request(route, input, { ...call, headers: { ...call.headers, authorization: `Bearer ${fresh}` } }, true);
        }
        throw errorFromResponse(error.response.status, error.response.headers, error.data);
      }
      if (isTimeoutError(error)) throw new TimeoutError(`No answer from ${url} within the timeout`, { code: 'timeout', cause: error });
      if (isNetworkError(error) || (error instanceof TypeError && !(error instanceof SvcError)))
        throw new ConnectionError(`Cannot reach ${url}: ${networkFailure(error)}`, { code: 'connection_error', cause: error });
      throw error;
    }
    const idleMs = idleTimeoutOf(call.streamIdleTimeout, this.options.streamIdleTimeout);
    const data = await this.decode(route, response, () => streamAbort.abort(), idleMs);
    // A byte answer is handed back as a Response whose body is under the idle timeout: the raw result's is that one too.
    return { data: data as T, response: data instanceof Response ? data : response };
  }

  private async decode(route: RouteDefinition, response: Response, abortStream: () => void, idleMs: number | undefined): Promise<unknown> {
    const spec = route.responses[response.status];
    if (!spec) {
      const body = await response.text().catch(() => '');
      throw errorFromResponse(response.status, response.headers, body);
    }
    if (spec instanceof z.ZodType) return response.json();
    switch (spec.kind) {
      case 'text':
        return response.text();
      case 'bytes':
        return withIdleTimeoutResponse(response, idleMs, `the answer from ${response.url || 'the server'}`);
      case 'sse':
        return readSse(response, abortStream, idleMs);
      case 'json-or-bytes':
        return (response.headers.get('content-type') ?? '').startsWith('application/json')
          ? response.json()
          : withIdleTimeoutResponse(response, idleMs, `the answer from ${response.url || 'the server'}`);
      case 'json-or-sse':
        return (response.headers.get('content-type') ?? '').startsWith('text/event-stream') ? readSse(response, abortStream, idleMs) : response.json();
      case 'redirect':
        await response.body?.cancel();
        return { location: response.headers.get('location') ?? '', headers: response.headers };
      case 'empty':
        return undefined;
    }
  }
}
