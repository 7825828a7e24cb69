import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * Where a verified download's bytes go: each chunk is hashed (SHA-256) and appended to a new
 * file. Two kinds: one on a hashing thread (hashing-thread.ts, the default) and this thread's
 * own, used where a worker thread cannot be started.
 */
export interface HashingSink {
  /** Hands a chunk over; the sink owns it from here (it may be transferred to another thread). */
  write(chunk: Uint8Array): void;
  /** Bytes handed over and not yet written to the file. */
  readonly pendingBytes: number;
  /** Resolves when some pending bytes are written (or the sink failed). */
  drained(): Promise<void>;
  /** Throws the first write error, if any. */
  throwIfFailed(): void;
  /** Writes what is pending, closes the file and answers the digest of every byte written. */
  finish(): Promise<{ sha256: string; sizeBytes: number }>;
  /** Stops writing and closes the file (left partial; the caller removes it). */
  abort(): Promise<void>;
}

/** Hashes on this thread and appends with one `writev` in flight on the thread pool. */
export async function openInlineSink(file: string): Promise<HashingSink> {
  return new InlineSink(await open(file, 'wx', 0o644));
}

class InlineSink implements HashingSink {
  private readonly handle: FileHandle;
  private readonly hash = createHash('sha256');
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private sizeBytes = 0;
  private inFlight: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  private closed = false;

  constructor(handle: FileHandle) {
    this.handle = handle;
  }

  get pendingBytes(): number {
    return this.queuedBytes;
  }

  write(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.sizeBytes += chunk.byteLength;
    this.queue.push(chunk);
    this.queuedBytes += chunk.byteLength;
    // Chunks that arrive while a write runs become the next `writev`, not one write each.
    if (!this.inFlight) this.flush();
  }

  async drained(): Promise<void> {
    await this.inFlight;
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  async finish(): Promise<{ sha256: string; sizeBytes: number }> {
    try {
      while (this.inFlight) await this.inFlight;
      this.throwIfFailed();
    } finally {
      await this.close();
    }
    return { sha256: this.hash.digest('hex'), sizeBytes: this.sizeBytes };
  }

  async abort(): Promise<void> {
    this.failure ??= { error: new Error('aborted') };
    while (this.inFlight) await this.inFlight;
    await this.close();
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
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
        this.failure ??= { error };
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
