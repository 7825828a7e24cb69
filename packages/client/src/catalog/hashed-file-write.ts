import { SvcError } from '../errors.ts';
import { idleGuardedRead } from '../stream-idle.ts';
import { openInlineSink, type HashingSink } from './hashing-sink.ts';
import { openThreadSink } from './hashing-thread.ts';

/**
 * Bytes read from the network ahead of the disk before reading waits for a write. Writes to the
 * page cache outrun a network body, so this only binds memory when the disk (or the hashing
 * thread) falls behind.
 */
const WRITE_AHEAD_BYTES = 8 * 1024 * 1024;

/**
 * Bodies planned at least this large are hashed on the hashing thread; smaller ones inline, where
 * hashing costs under ~10 ms and a thread would first have to boot.
 */
export const HASHING_THREAD_MIN_BYTES = 16 * 1024 * 1024;

/** The body sent more bytes than `maxBytes`; reading stopped at the chunk that crossed it. */
export class BodyOverflowError extends SvcError {
  constructor(maxBytes: number) {
    super(`more than ${maxBytes} bytes`, { code: 'body_overflow' });
  }
}

export interface HashedBody {
  /** Of the whole file (the resumed bytes included). */
  sha256: string;
  sizeBytes: number;
}

export interface HashedFileWriteOptions {
  /** More bytes than this stop the read with a BodyOverflowError; nothing past it is hashed or written. */
  maxBytes: number;
  signal?: AbortSignal;
  /** Called as each chunk arrives, with the bytes received so far. */
  onBytes?: (receivedBytes: number) => void;
  /**
   * Hash and write on this thread instead of the hashing thread (as where worker threads are not
   * allowed). Default: inline below HASHING_THREAD_MIN_BYTES of `maxBytes`.
   */
  inline?: boolean;
  /**
   * Resume a partial file: its first `resumeFrom` bytes are hashed first (on the same thread as
   * the rest) and the body is appended after them; the answer is the digest and size of the
   * whole file. `maxBytes` still bounds the body alone. Default 0: a new file.
   */
  resumeFrom?: number;
  /** Fail with StreamIdleTimeoutError when the body sends nothing this long (ms) while a read waits; undefined: no limit. */
  idleTimeoutMs?: number;
}

/**
 * Streams a response body into a new file (`wx`: never over an existing one) and computes its
 * SHA-256 on the way. This thread only reads the web stream (no Node stream adapters) and hands
 * each chunk, by transfer rather than copy, to the hashing thread, which hashes and appends it
 * while the next chunks arrive: hashing and writing overlap the network instead of taking turns
 * with it. Reading pauses only while WRITE_AHEAD_BYTES wait for the file.
 *
 * @example
 * ```ts
 * const response = await fetch(url);
 * const { sha256, sizeBytes } = await writeHashedBody(response.body, './model.bin.partial', { maxBytes: plannedSize });
 * ```
 */
export async function writeHashedBody(body: ReadableStream<Uint8Array> | null, file: string, options: HashedFileWriteOptions): Promise<HashedBody> {
  const resumeFrom = options.resumeFrom ?? 0;
  const inline = options.inline ?? resumeFrom + options.maxBytes < HASHING_THREAD_MIN_BYTES;
  const sink: HashingSink = (!inline && openThreadSink(file, resumeFrom)) || (await openInlineSink(file, resumeFrom));
  const reader = body?.getReader();
  // A fetch that ignores its signal still stops: cancelling the reader ends the pending read.
  const cancel = () => void reader?.cancel(options.signal?.reason).catch(() => {});
  options.signal?.addEventListener('abort', cancel, { once: true });
  let received = 0;
  try {
    options.signal?.throwIfAborted();
    // One read is always pending, so the body keeps flowing from the socket while this thread
    // hands the chunk in hand over.
    const read = reader && idleGuardedRead(reader, options.idleTimeoutMs, 'the object store');
    let next = read?.();
    next?.catch(() => {}); // a failed read is thrown where it is awaited; this only marks it handled
    while (next) {
      const { done, value } = await next;
      if (done) break;
      next = read!();
      next.catch(() => {});
      received += value.byteLength;
      if (received > options.maxBytes) throw new BodyOverflowError(options.maxBytes);
      options.onBytes?.(received);
      sink.write(value); // `value` belongs to the sink from here
      while (sink.pendingBytes >= WRITE_AHEAD_BYTES) {
        sink.throwIfFailed();
        await sink.drained();
      }
      sink.throwIfFailed();
    }
    // A cancelled reader ends like a finished body; the abort is the truth.
    options.signal?.throwIfAborted();
    const written = await sink.finish();
    if (written.sizeBytes !== resumeFrom + received) throw new Error(`wrote ${written.sizeBytes} of ${resumeFrom + received} bytes`);
    return written;
  } catch (error) {
    // Release the connection at once rather than when the body is collected.
    await reader?.cancel(error).catch(() => {});
    await sink.abort();
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', cancel);
  }
}
