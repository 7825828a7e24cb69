import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * Bytes read from the network ahead of the disk before reading waits for a write. Writes to the
 * page cache outrun a network body, so this only binds memory when the disk stalls.
 */
const WRITE_AHEAD_BYTES = 4 * 1024 * 1024;

/** The body sent more bytes than `maxBytes`; reading stopped at the chunk that crossed it. */
export class BodyOverflowError extends Error {
  constructor(maxBytes: number) {
    super(`more than ${maxBytes} bytes`);
  }
}

export interface HashedBody {
  sha256: string;
  sizeBytes: number;
}

export interface HashedFileWriteOptions {
  /** More bytes than this stop the read with a BodyOverflowError; nothing past it is hashed or written. */
  maxBytes: number;
  signal?: AbortSignal;
  /** Called after each chunk is hashed, with the bytes received so far. */
  onBytes?: (receivedBytes: number) => void;
}

/**
 * Streams a response body into a new file (`wx`: never over an existing one) and computes its
 * SHA-256 on the way. The web stream is read directly: no Node stream adapters between the
 * socket and the disk, each chunk hashed once as it arrives and handed to the disk by reference.
 * One `writev` is in flight at a time on the thread pool while the next chunks are read and
 * hashed on this thread; chunks arriving meanwhile are written together in the next `writev`.
 *
 * @example
 * ```ts
 * const response = await fetch(url);
 * const { sha256, sizeBytes } = await writeHashedBody(response.body, './model.bin.partial', { maxBytes: plannedSize });
 * ```
 */
export async function writeHashedBody(body: ReadableStream<Uint8Array> | null, file: string, options: HashedFileWriteOptions): Promise<HashedBody> {
  const hash = createHash('sha256');
  const handle = await open(file, 'wx', 0o644);
  const reader = body?.getReader();
  // A fetch that ignores its signal still stops: cancelling the reader ends the pending read.
  const cancel = () => void reader?.cancel(options.signal?.reason).catch(() => {});
  options.signal?.addEventListener('abort', cancel, { once: true });
  const disk = new SequentialWriter(handle);
  let received = 0;
  try {
    options.signal?.throwIfAborted();
    // One read is always pending, so the body keeps flowing from the socket while this thread
    // hashes the chunk in hand.
    let next = reader?.read();
    next?.catch(() => {}); // a failed read is thrown where it is awaited; this only marks it handled
    while (next) {
      const { done, value } = await next;
      if (done) break;
      next = reader!.read();
      next.catch(() => {});
      received += value.byteLength;
      if (received > options.maxBytes) throw new BodyOverflowError(options.maxBytes);
      hash.update(value);
      options.onBytes?.(received);
      disk.write(value);
      if (disk.queuedBytes >= WRITE_AHEAD_BYTES) await disk.drained();
      disk.throwIfFailed();
    }
    // A cancelled reader ends like a finished body; the abort is the truth.
    options.signal?.throwIfAborted();
    await disk.finished();
    return { sha256: hash.digest('hex'), sizeBytes: received };
  } catch (error) {
    // Release the connection at once rather than when the body is collected.
    await reader?.cancel(error).catch(() => {});
    await disk.finished().catch(() => {});
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', cancel);
    await handle.close();
  }
}

/**
 * Appends chunks to a file with one `writev` in flight: what is queued while it runs becomes
 * the next `writev`, so a fast network is not held up by one write per chunk waited on in turn.
 */
class SequentialWriter {
  private queue: Uint8Array[] = [];
  queuedBytes = 0;
  private inFlight: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  private readonly handle: FileHandle;

  constructor(handle: FileHandle) {
    this.handle = handle;
  }

  write(chunk: Uint8Array): void {
    this.queue.push(chunk);
    this.queuedBytes += chunk.byteLength;
    if (!this.inFlight) this.flush();
  }

  /** Resolves once the write in flight is done (and the queue has become the next one). */
  async drained(): Promise<void> {
    await this.inFlight;
  }

  /** Resolves once everything queued is on disk; rejects with the first write error. */
  async finished(): Promise<void> {
    while (this.inFlight) await this.inFlight;
    this.throwIfFailed();
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  private flush(): void {
    if (this.failure || this.queue.length === 0) {
      this.inFlight = undefined;
      return;
    }
    const batch = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    this.inFlight = writeAll(this.handle, batch).then(
      () => this.flush(),
      (error: unknown) => {
        this.failure = { error };
        this.inFlight = undefined;
      },
    );
  }
}

/** `writev` until every byte is written: a regular file may take fewer bytes (or fewer buffers than IOV_MAX) per call. */
async function writeAll(handle: FileHandle, buffers: Uint8Array[]): Promise<void> {
  let remaining = buffers;
  while (remaining.length > 0) {
    let { bytesWritten } = await handle.writev(remaining);
    if (bytesWritten === 0) throw new Error('the file accepted no bytes');
    let index = 0;
    while (index < remaining.length && bytesWritten >= remaining[index]!.byteLength) bytesWritten -= remaining[index++]!.byteLength;
    remaining = remaining.slice(index);
    if (bytesWritten > 0) remaining[0] = remaining[0]!.subarray(bytesWritten);
  }
}
