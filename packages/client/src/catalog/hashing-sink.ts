import { createHash, type Hash } from 'node:crypto';
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

/**
 * Hashes on this thread and appends with one `writev` in flight on the thread pool. A new file
 * (`wx`), or with `resumeFrom` > 0 a partial one whose first `resumeFrom` bytes are hashed first
 * (anything past them is cut), so the digest at the end is the whole file's.
 */
export async function openInlineSink(file: string, resumeFrom = 0): Promise<HashingSink> {
  if (resumeFrom <= 0) return new InlineSink(await open(file, 'wx', 0o644));
  const handle = await open(file, 'r+');
  try {
    const hash = createHash('sha256');
    const read = await hashFilePrefix(handle, hash, resumeFrom);
    if (read !== resumeFrom) throw Object.assign(new Error(`the partial file holds ${read} bytes, not ${resumeFrom}`), { code: 'ESHORT' });
    await handle.truncate(resumeFrom);
    return new InlineSink(handle, hash, resumeFrom);
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The SHA-256 and size of a whole file, hashed on this thread (where the hashing thread cannot run). */
export async function hashFileInline(file: string): Promise<{ sha256: string; sizeBytes: number }> {
  const handle = await open(file, 'r');
  try {
    const hash = createHash('sha256');
    const sizeBytes = await hashFilePrefix(handle, hash, Number.POSITIVE_INFINITY);
    return { sha256: hash.digest('hex'), sizeBytes };
  } finally {
    await handle.close();
  }
}

/** Feeds the first `limit` bytes of a file to `hash`, a megabyte a read; answers how many there were. */
async function hashFilePrefix(handle: FileHandle, hash: Hash, limit: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  let read = 0;
  while (read < limit) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.byteLength, limit - read), read);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    read += bytesRead;
  }
  return read;
}

class InlineSink implements HashingSink {
  private readonly handle: FileHandle;
  private readonly hash: Hash;
  private queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private sizeBytes: number;
  /** Where the next write lands: the bytes handed to a write so far. */
  private writtenBytes: number;
  private inFlight: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  private closed = false;

  constructor(handle: FileHandle, hash = createHash('sha256'), sizeBytes = 0) {
    this.handle = handle;
    this.hash = hash;
    this.sizeBytes = sizeBytes;
    this.writtenBytes = sizeBytes;
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
    const position = this.writtenBytes;
    this.writtenBytes += batch.reduce((sum, chunk) => sum + chunk.byteLength, 0);
    this.inFlight = writeAll(this.handle, batch, position).then(
      () => this.flush(),
      (error: unknown) => {
        this.failure ??= { error };
        this.inFlight = undefined;
      },
    );
  }
}

/** `writev` at `position` until every byte is written: a regular file may take fewer bytes (or fewer buffers than IOV_MAX) per call. */
async function writeAll(handle: FileHandle, buffers: Uint8Array[], position: number): Promise<void> {
  let remaining = buffers;
  while (remaining.length > 0) {
    let { bytesWritten } = await handle.writev(remaining, position);
    if (bytesWritten === 0) throw new Error('the file accepted no bytes');
    position += bytesWritten;
    let index = 0;
    while (index < remaining.length && bytesWritten >= remaining[index]!.byteLength) bytesWritten -= remaining[index++]!.byteLength;
    remaining = remaining.slice(index);
    if (bytesWritten > 0) remaining[0] = remaining[0]!.subarray(bytesWritten);
  }
}
