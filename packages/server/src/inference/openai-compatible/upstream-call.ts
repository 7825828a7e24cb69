import { ServiceError } from '../../http/service-error.ts';
import { EngineUnavailableError, type EngineCallOptions } from '../provider.ts';
import type { UpstreamSettings } from './upstream-config.ts';

/** The most of an upstream's error body read, to find its message. */
const ERROR_BODY_MAX_BYTES = 65_536;
/** Statuses that say the request itself is wrong: another upstream would refuse it too, so no fallback. */
const REQUEST_REJECTED = new Set([400, 413, 422]);

/**
 * The two deadlines of an upstream call. Until the status and headers arrive, `timeoutMs`
 * (connect included); then `idleTimeoutMs` between two pieces of the body. The client's abort
 * signal is linked in, so a client that goes away aborts the upstream request at once.
 */
export class UpstreamDeadline {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly clientSignal: AbortSignal;
  private readonly idleTimeoutMs: number;
  private timer: NodeJS.Timeout | undefined;
  private expired = false;
  private readonly onClientAbort = () => this.controller.abort(this.clientSignal.reason);

  constructor(clientSignal: AbortSignal, timeoutMs: number, idleTimeoutMs: number) {
    this.signal = this.controller.signal;
    this.clientSignal = clientSignal;
    this.idleTimeoutMs = idleTimeoutMs;
    if (clientSignal.aborted) this.controller.abort(clientSignal.reason);
    else clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    this.arm(timeoutMs);
  }

  /** Whether the call ended because a deadline passed (not because the client left). */
  get timedOut(): boolean {
    return this.expired;
  }

  /** Something arrived: the idle deadline starts again. */
  touch(): void {
    this.arm(this.idleTimeoutMs);
  }

  /** The call is over: no timer stays armed, no listener stays on the client's signal. */
  finish(): void {
    clearTimeout(this.timer);
    this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new Error('upstream deadline passed'));
    }, ms);
  }
}

export interface OpenedUpstreamCall {
  response: Response;
  deadline: UpstreamDeadline;
}

/** The headers of every call; the key is sent and never kept anywhere else. */
function headersFor(upstream: UpstreamSettings): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(upstream.apiKey !== undefined ? { authorization: `Bearer ${upstream.apiKey}` } : {}),
  };
}

/** Removes the key from text an upstream sent back (some echo a key they refused). */
export function redactSecret(text: string, upstream: UpstreamSettings): string {
  return upstream.apiKey ? text.split(upstream.apiKey).join('***') : text;
}

/**
 * POSTs JSON to an upstream and resolves once its status and headers arrived with a 2xx. Every
 * failure up to then is an EngineUnavailableError (the caller may fall back), except a 400/413/422,
 * which says the request itself is wrong and is answered to the caller as 422
 * `upstream_rejected_request` with the upstream's message. Messages name the upstream by id,
 * never its URL or key.
 */
export async function openUpstreamCall(upstream: UpstreamSettings, url: string, body: unknown, options: EngineCallOptions): Promise<OpenedUpstreamCall> {
  const deadline = new UpstreamDeadline(options.signal, upstream.timeoutMs, upstream.idleTimeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: headersFor(upstream), body: JSON.stringify(body), signal: deadline.signal });
  } catch (error) {
    deadline.finish();
    throw failureBeforeAnswer(upstream, deadline, error, options);
  }
  if (response.ok) {
    deadline.touch();
    return { response, deadline };
  }
  try {
    const message = await upstreamErrorMessage(response, deadline);
    if (REQUEST_REJECTED.has(response.status)) {
      throw new ServiceError('upstream_rejected_request', `Upstream "${upstream.id}" refused the request (${response.status})${message ? `: ${redactSecret(message, upstream)}` : '.'}`);
    }
    // 401/403 say the configured key is wrong: the caller is told only that the upstream failed.
    const detail = response.status === 401 || response.status === 403 ? ' (check its API key)' : response.status === 429 ? ' (rate limited)' : '';
    throw new EngineUnavailableError('upstream_error', `Upstream "${upstream.id}" answered ${response.status}${detail}.`, response.status);
  } catch (error) {
    if (error instanceof ServiceError || error instanceof EngineUnavailableError) throw error;
    throw failureBeforeAnswer(upstream, deadline, error, options);
  } finally {
    deadline.finish();
  }
}

/** Reads a JSON answer within the idle deadline; a failure here produced nothing for the caller, so it may still fall back. */
export async function readUpstreamJson<T>(upstream: UpstreamSettings, call: OpenedUpstreamCall, options: EngineCallOptions): Promise<T> {
  try {
    const reader = call.response.body!.getReader();
    const parts: Uint8Array[] = [];
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      call.deadline.touch();
      parts.push(value);
    }
    return JSON.parse(Buffer.concat(parts).toString('utf8')) as T;
  } catch (error) {
    throw failureBeforeAnswer(upstream, call.deadline, error, options);
  } finally {
    call.deadline.finish();
  }
}

/** What a failure before anything reached the caller becomes: a timeout, an unreachable upstream, or the client's own abort. */
export function failureBeforeAnswer(upstream: UpstreamSettings, deadline: UpstreamDeadline, error: unknown, options: EngineCallOptions): Error {
  if (deadline.timedOut) return new EngineUnavailableError('upstream_timeout', `Upstream "${upstream.id}" did not answer in time.`);
  if (options.signal.aborted) return error instanceof Error ? error : new Error('aborted');
  const code = (error as { cause?: { code?: string } }).cause?.code;
  const why = error instanceof SyntaxError ? 'sent a body that is not JSON' : `could not be reached${code ? ` (${code})` : ''}`;
  return new EngineUnavailableError('upstream_error', `Upstream "${upstream.id}" ${why}.`);
}

/** The message of an OpenAI-shaped error body (`{ error: { message } }`), or of TEI's (`{ error: "..." }`), bounded. */
async function upstreamErrorMessage(response: Response, deadline: UpstreamDeadline): Promise<string | undefined> {
  const reader = response.body?.getReader();
  if (!reader) return undefined;
  const parts: Uint8Array[] = [];
  let size = 0;
  while (size < ERROR_BODY_MAX_BYTES) {
    const { value, done } = await reader.read();
    if (done) break;
    deadline.touch();
    parts.push(value);
    size += value.byteLength;
  }
  await reader.cancel().catch(() => {});
  const text = Buffer.concat(parts).toString('utf8').slice(0, ERROR_BODY_MAX_BYTES);
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    return typeof message === 'string' ? message.slice(0, 500) : undefined;
  } catch {
    return undefined;
  }
}
