import type { Dispatcher } from 'undici';

/** Who takes an answer's body, as text, as it comes. */
export interface UpstreamBodyReader {
  data(text: string): void;
  end(): void;
  error(error: Error): void;
}

/**
 * One call to an upstream, driven through undici's `dispatch` with this object as the handler:
 * the answer's status, then its body as UTF-8 text handed to one reader, with `pause`, `resume`
 * and `abort` passed straight to undici's controller. The body is read once, by one reader, so no
 * stream is needed between the socket and the SSE parser.
 *
 * Shaped so that a stream's objects die young, since one that reaches the old generation keeps
 * its whole request alive through every young collection until an old one (bench/chat-proxy
 * prints what each thread promotes): undici's `dispatch` with this one plain handler rather than
 * its `request()`, whose per-call handler and body stream are promoted; and `answered` made as a
 * class field rather than in a constructor by a closure over `this`, which is promoted too. The
 * measurements: docs/inference.md, "What the young collections promote".
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  /** The answer's status, once `answered` resolved. */
  statusCode = 0;
  /** The answer's `retry-after-ms` or `retry-after` header, as sent (read only when the call failed). */
  retryAfter: string | undefined = undefined;
  private resolveAnswered!: () => void;
  private rejectAnswered!: (error: Error) => void;
  /** Resolves when the status and headers arrived; rejects when the call failed before. */
  readonly answered = new Promise<void>((resolve, reject) => {
    this.resolveAnswered = resolve;
    this.rejectAnswered = reject;
  });
  private hasAnswer = false;
  private controller: Dispatcher.DispatchController | null = null;
  /** An abort asked for before undici handed over its controller (the call was still queued). */
  private abortReason: Error | undefined;
  private readonly decoder = new TextDecoder();
  private reader: UpstreamBodyReader | undefined;
  /** Text that came before a reader was attached (the reader is attached right after `answered`). */
  private early: string[] = [];
  private ended = false;
  private failure: Error | undefined;

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // 1xx answers are interim: the real one follows.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    if (statusCode >= 300) this.retryAfter = retryAfterHeader(headers);
    this.hasAnswer = true;
    this.resolveAnswered();
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const text = this.decoder.decode(chunk, { stream: true });
    if (text !== '') this.deliver(text);
  }

  onResponseEnd(): void {
    const rest = this.decoder.decode();
    if (rest !== '') this.deliver(rest);
    this.ended = true;
    this.reader?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (!this.hasAnswer) {
      this.rejectAnswered(error);
      return;
    }
    this.failure = error;
    this.reader?.error(error);
  }

  private deliver(text: string): void {
    if (this.reader) this.reader.data(text);
    else this.early.push(text);
  }

  /** Hands the body to `reader`, from its first piece (the pieces that came already are given at once). */
  read(reader: UpstreamBodyReader): void {
    this.reader = reader;
    const early = this.early;
    this.early = [];
    for (const text of early) reader.data(text);
    if (this.failure) reader.error(this.failure);
    else if (this.ended) reader.end();
  }

  /**
   * The whole body as text. With `maxChars`, reading stops there and the call is aborted (an
   * error page need not be read to its end); without, it is read to its end.
   */
  text(maxChars = Infinity): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = '';
      let done = false;
      this.read({
        data: (piece) => {
          if (done) return;
          text += piece;
          if (text.length < maxChars) return;
          done = true;
          this.abort(new Error('The body is longer than svc reads.'));
          resolve(text.slice(0, maxChars));
        },
        end: () => {
          if (!done) resolve(text);
          done = true;
        },
        error: (error) => {
          if (!done) reject(error);
          done = true;
        },
      });
    });
  }

  /**
   * Ends the call: the connection is closed, and `answered` or the reader gets `reason`. A call
   * still queued for a connection fails at once and is dropped when undici starts it.
   */
  abort(reason: Error): void {
    if (this.ended || this.failure) return;
    if (!this.hasAnswer) this.rejectAnswered(reason);
    if (this.controller) this.controller.abort(reason);
    else this.abortReason = reason;
  }

  pause(): void {
    this.controller?.pause();
  }

  resume(): void {
    this.controller?.resume();
  }

  get paused(): boolean {
    return this.controller?.paused ?? false;
  }
}

/** OpenAI's `retry-after-ms` (milliseconds) before the standard `retry-after` (seconds or a date), kept as `ms:<n>` or the raw value. */
function retryAfterHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const milliseconds = headers['retry-after-ms'];
  if (typeof milliseconds === 'string') return `ms:${milliseconds}`;
  const value = headers['retry-after'];
  return typeof value === 'string' ? value : undefined;
}
