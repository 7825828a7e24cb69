import { TimeoutError } from './errors.ts';

/**
 * How long a streamed read (a download's body, the board's push stream, any server-sent event
 * stream) may wait for its next bytes before it fails, in ms: four of the server's 15 s
 * keep-alive comments, so only a server (or a proxy) that has stopped sending without closing
 * trips it, never a quiet stream.
 */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 60_000;

/** A stream that sent nothing for its idle timeout and did not close: code `stream_idle_timeout`. */
export class StreamIdleTimeoutError extends TimeoutError {
  readonly idleMs: number;
  constructor(what: string, idleMs: number) {
    super(`${what} sent nothing for ${idleMs} ms and did not close (the client's streamIdleTimeout); gave up on it`, { code: 'stream_idle_timeout' });
    this.idleMs = idleMs;
  }
}

/** The idle timeout in force: a positive number of ms, or undefined for none (0 or Infinity turns it off). */
export function idleTimeoutOf(...choices: Array<number | undefined>): number | undefined {
  const chosen = choices.find((value) => value !== undefined) ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS;
  return chosen > 0 && Number.isFinite(chosen) ? chosen : undefined;
}

/**
 * `reader.read()` that fails with StreamIdleTimeoutError when nothing arrives within `idleMs`,
 * cancelling the reader (which frees the connection). The clock runs only while a read waits on
 * the network, so a consumer that is slow to ask (a busy disk) never counts as a silent server.
 *
 * One timer serves every read: a read only notes when it started, and the timer, when it fires,
 * either finds the waiting read too old or sleeps until it would be (arming and clearing a timer
 * per read cost a download 10-30 us a 64 KiB chunk in bench/stream-idle.ts). It is unref'd (a
 * pending read on a socket keeps the process alive anyway) and stops once no read is waiting.
 */
export function idleGuardedRead<T>(
  reader: ReadableStreamDefaultReader<T>,
  idleMs: number | undefined,
  what: string,
): () => Promise<ReadableStreamReadResult<T>> {
  if (idleMs === undefined) return () => reader.read();
  let waitingSince: number | undefined;
  let idle: StreamIdleTimeoutError | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = () => {
    timer = undefined;
    if (waitingSince === undefined) return;
    const waited = performance.now() - waitingSince;
    if (waited < idleMs) {
      arm(idleMs - waited);
      return;
    }
    idle = new StreamIdleTimeoutError(what, idleMs);
    // The waiting read then ends (as done), and answers the idle error below.
    void reader.cancel(idle).catch(() => {});
  };
  const arm = (ms: number) => {
    timer = setTimeout(check, ms);
    timer.unref?.();
  };
  return async () => {
    if (idle) throw idle;
    waitingSince = performance.now();
    if (timer === undefined) arm(idleMs);
    try {
      const result = await reader.read();
      if (idle) throw idle;
      return result;
    } finally {
      waitingSince = undefined;
    }
  };
}

/** The same stream, failing with StreamIdleTimeoutError when its source sends nothing for `idleMs` (see idleGuardedRead). */
export function withIdleTimeout<T>(body: ReadableStream<T>, idleMs: number | undefined, what: string): ReadableStream<T> {
  if (idleMs === undefined) return body;
  const reader = body.getReader();
  const read = idleGuardedRead(reader, idleMs, what);
  return new ReadableStream<T>(
    {
      async pull(controller) {
        try {
          const { done, value } = await read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (error) {
          controller.error(error);
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    // Nothing is read ahead: a read starts only when the consumer asks, so only the source's silence is timed.
    { highWaterMark: 0 },
  );
}

/** Statuses whose answer has no body (a Response made with one and a body is refused). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The same answer with its body under the idle timeout, for methods that hand the caller the raw
 * `Response` (a stored object's bytes, a CSV export): its body, `arrayBuffer()`, `text()` and the
 * rest fail with StreamIdleTimeoutError when the server sends nothing for `idleMs` (see
 * idleGuardedRead; the clock runs only while the caller's read waits). Status, headers, `url` and
 * `redirected` are the original's.
 */
export function withIdleTimeoutResponse(response: Response, idleMs: number | undefined, what: string): Response {
  if (idleMs === undefined || response.body === null || NULL_BODY_STATUSES.has(response.status)) return response;
  const guarded = new Response(withIdleTimeout(response.body, idleMs, what), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // A Response made here has no URL of its own; the caller still sees where the bytes came from.
  Object.defineProperties(guarded, { url: { value: response.url }, redirected: { value: response.redirected } });
  return guarded;
}
