import { Agent, errors, type Dispatcher } from 'undici';
import { ServiceError } from '../../service-error.ts';
import { withTraceContext } from '../../observability/tracing.ts';
import { EngineUnavailableError, type EngineCallOptions } from '../provider.ts';
import type { UpstreamSettings } from './upstream-config.ts';
import { UpstreamExchange } from './upstream-exchange.ts';
import { retryAfterMs } from './retry-after.ts';

/** The most of an upstream's error body read, to find its message. */
const ERROR_BODY_MAX_CHARS = 65_536;
/** Statuses that say the request itself is wrong: another upstream would refuse it too, so no fallback. */
const REQUEST_REJECTED = new Set([400, 413, 422]);

/** An upstream call whose status and headers came with a 2xx: its body is still to be read. */
export type OpenedUpstreamCall = UpstreamExchange;

/**
 * The connection pool of one upstream. undici's `dispatch` (see UpstreamExchange) rather than
 * `fetch`: no web streams between the socket and the SSE parser (bench/chat-proxy), and its
 * own deadlines: `timeoutMs` to connect and then to the status and headers, `idleTimeoutMs`
 * between two pieces of the body. undici checks them on a coarse clock (about a second), which
 * costs nothing per chunk; the first-byte deadline is also kept exactly by `openUpstreamCall`.
 */
export function createUpstreamDispatcher(upstream: UpstreamSettings): Agent {
  return new Agent({
    connect: { timeout: upstream.timeoutMs },
    headersTimeout: upstream.timeoutMs,
    bodyTimeout: upstream.idleTimeoutMs,
    keepAliveTimeout: 30_000,
  });
}

/** Where a call goes, split once when the provider is made: parsing the URL on every call costs. */
export interface UpstreamTarget {
  origin: string;
  path: string;
}

export function upstreamTarget(url: string): UpstreamTarget {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/** The headers of every call (with the caller's trace while tracing is on); the key is sent and kept nowhere else. */
function headersFor(upstream: UpstreamSettings): Record<string, string> {
  return withTraceContext({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(upstream.apiKey !== undefined ? { authorization: `Bearer ${upstream.apiKey}` } : {}),
  });
}

/** Removes the key from text an upstream sent back (some echo a key they refused). */
export function redactSecret(text: string, upstream: UpstreamSettings): string {
  return upstream.apiKey ? text.split(upstream.apiKey).join('***') : text;
}

const isTimeout = (error: unknown) =>
  error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || error instanceof errors.ConnectTimeoutError;

/**
 * POSTs JSON to an upstream and resolves once its status and headers arrived with a 2xx. A
 * client that leaves (its abort signal) aborts the call at once, body included. Every
 * failure up to then is an EngineUnavailableError (the caller may fall back), except a 400/413/422,
 * which says the request itself is wrong and is answered as 422 `upstream_rejected_request` with
 * the upstream's message. Messages name the upstream by id, never its URL or key.
 */
export async function openUpstreamCall(
  upstream: UpstreamSettings,
  dispatcher: Dispatcher,
  target: UpstreamTarget,
  body: unknown,
  options: EngineCallOptions,
): Promise<OpenedUpstreamCall> {
  // The first-byte deadline is kept here, to the millisecond (undici's own is on a coarse clock
  // and stays as a backstop); it ends when the headers arrive. The idle deadline is undici's.
  // The client's abort is forwarded to the call by a listener on its signal.
  const call = new UpstreamExchange();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    call.abort(new errors.HeadersTimeoutError());
  }, upstream.timeoutMs);
  const abortForClient = () => call.abort(options.signal.reason instanceof Error ? options.signal.reason : new Error('The client went away.'));
  if (options.signal.aborted) abortForClient();
  else options.signal.addEventListener('abort', abortForClient, { once: true });
  dispatcher.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers: headersFor(upstream), body: JSON.stringify(body) }, call);
  try {
    await call.answered;
  } catch (error) {
    throw failureBeforeAnswer(upstream, timedOut ? new errors.HeadersTimeoutError() : error, options);
  } finally {
    clearTimeout(timer);
  }
  const status = call.statusCode;
  if (status >= 200 && status < 300) return call;
  let message: string | undefined;
  try {
    message = await upstreamErrorMessage(call);
  } catch (error) {
    throw failureBeforeAnswer(upstream, error, options);
  }
  if (REQUEST_REJECTED.has(status)) {
    throw new ServiceError(
      'upstream_rejected_request',
      `Upstream "${upstream.id}" refused the request (${status})${message ? `: ${redactSecret(message, upstream)}` : '.'}`,
    );
  }
  // 401/403 say the configured key is wrong: the caller is told only that the upstream failed.
  const detail = status === 401 || status === 403 ? ' (check its API key)' : status === 429 ? ' (rate limited)' : '';
  // A wait the upstream names (429, 503) is kept: the deployment pool cools the deployment that long.
  const wait = retryAfterMs(call.retryAfter, Date.now());
  throw new EngineUnavailableError('upstream_error', `Upstream "${upstream.id}" answered ${status}${detail}.`, status, wait);
}

/** Reads a JSON answer; a failure here produced nothing for the caller, so it may still fall back. */
export async function readUpstreamJson<T>(upstream: UpstreamSettings, call: OpenedUpstreamCall, options: EngineCallOptions): Promise<T> {
  try {
    return JSON.parse(await call.text()) as T;
  } catch (error) {
    throw failureBeforeAnswer(upstream, error, options);
  }
}

/** What a failure before anything reached the caller becomes: a timeout, an unreachable upstream, or the client's own abort. */
export function failureBeforeAnswer(upstream: UpstreamSettings, error: unknown, options: EngineCallOptions): Error {
  if (options.signal.aborted) return error instanceof Error ? error : new Error('aborted');
  if (isTimeout(error)) return new EngineUnavailableError('upstream_timeout', `Upstream "${upstream.id}" did not answer in time.`);
  const code = (error as { code?: string; cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
  const why = error instanceof SyntaxError ? 'sent a body that is not JSON' : `could not be reached${code ? ` (${code})` : ''}`;
  return new EngineUnavailableError('upstream_error', `Upstream "${upstream.id}" ${why}.`);
}

/** A failure while a stream was being read, after the caller's stream started. */
export function failureMidStream(upstream: UpstreamSettings, error: unknown, options: EngineCallOptions): Error {
  if (options.signal.aborted) return error instanceof Error ? error : new Error('aborted');
  if (isTimeout(error)) return new ServiceError('upstream_timeout', `Upstream "${upstream.id}" went silent mid-stream.`);
  return new ServiceError('upstream_error', `Upstream "${upstream.id}" broke off the stream.`);
}

/** The message of an OpenAI-shaped error body (`{ error: { message } }`), or of TEI's (`{ error: "..." }`), bounded. */
async function upstreamErrorMessage(call: UpstreamExchange): Promise<string | undefined> {
  const text = await call.text(ERROR_BODY_MAX_CHARS);
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    return typeof message === 'string' ? message.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}
