import { isMarkedAsUntransferable, Worker } from 'node:worker_threads';
import type { HashingSink } from './hashing-sink.ts';

/**
 * The hashing thread: one worker, shared by every download of the process, that hashes chunks
 * and appends them to their files with synchronous writes, while the main thread only reads the
 * network. Chunks are transferred, not copied. Each file is a session (an id); messages of one
 * session are handled in order, so its bytes are hashed and written in the order received.
 *
 * Inline CommonJS (`eval`), so the published bundle needs no separate worker file.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { openSync, readSync, writeSync, closeSync, ftruncateSync } = require('node:fs');
const ACK_BYTES = ${1024 * 1024};
const READ_BYTES = ${4 * 1024 * 1024};
const files = new Map();
const refuse = (id, error) => parentPort.postMessage({ id, op: 'error', message: String(error && error.message), code: error && error.code });
/** Hashes the first limit bytes of an open file (all of it when limit is Infinity); answers how many it read. */
const hashPrefix = (fd, hash, limit) => {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  let read = 0;
  while (read < limit) {
    const got = readSync(fd, buffer, 0, Math.min(READ_BYTES, limit - read), read);
    if (got === 0) break;
    hash.update(buffer.subarray(0, got));
    read += got;
  }
  return read;
};
parentPort.on('message', ({ op, id, path, chunk, resumeFrom }) => {
  if (op === 'digest') {
    let fd;
    try {
      fd = openSync(path, 'r');
      const hash = createHash('sha256');
      const bytes = hashPrefix(fd, hash, Infinity);
      parentPort.postMessage({ id, op: 'done', sha256: hash.digest('hex'), bytes });
    } catch (error) {
      refuse(id, error);
    } finally {
      if (fd !== undefined) try { closeSync(fd); } catch {}
    }
    return;
  }
  if (op === 'open') {
    let fd;
    try {
      const hash = createHash('sha256');
      if (resumeFrom > 0) {
        // A partial file: its bytes are hashed first, then appended to after them, so the digest
        // at the end is the whole file's. Anything past resumeFrom is cut.
        fd = openSync(path, 'r+');
        const read = hashPrefix(fd, hash, resumeFrom);
        if (read !== resumeFrom) throw Object.assign(new Error(\`the partial file holds \${read} bytes, not \${resumeFrom}\`), { code: 'ESHORT' });
        ftruncateSync(fd, resumeFrom);
      } else {
        fd = openSync(path, 'wx', 0o644);
      }
      // written: bytes handed over in this session (what the main thread counts); position: where the next lands.
      const held = resumeFrom > 0 ? resumeFrom : 0;
      files.set(id, { fd, hash, held, written: 0, position: held, unacknowledged: 0 });
    } catch (error) {
      if (fd !== undefined) try { closeSync(fd); } catch {}
      refuse(id, error);
    }
    return;
  }
  const file = files.get(id);
  if (!file) {
    // Failed earlier (its error was sent): chunks are dropped, an abort is still answered.
    if (op === 'abort') parentPort.postMessage({ id, op: 'aborted' });
    return;
  }
  try {
    if (op === 'chunk') {
      file.hash.update(chunk);
      for (let offset = 0; offset < chunk.byteLength; ) {
        const written = writeSync(file.fd, chunk, offset, chunk.byteLength - offset, file.position);
        if (written === 0) throw new Error('the file accepted no bytes');
        offset += written;
        file.position += written;
      }
      file.written += chunk.byteLength;
      file.unacknowledged += chunk.byteLength;
      if (file.unacknowledged >= ACK_BYTES) {
        file.unacknowledged = 0;
        parentPort.postMessage({ id, op: 'written', bytes: file.written });
      }
      return;
    }
    files.delete(id);
    closeSync(file.fd);
    if (op === 'end') parentPort.postMessage({ id, op: 'done', sha256: file.hash.digest('hex'), bytes: file.held + file.written });
    else parentPort.postMessage({ id, op: 'aborted' });
  } catch (error) {
    files.delete(id);
    try { closeSync(file.fd); } catch {}
    refuse(id, error);
  }
});
`;

/** An idle hashing thread is ended after this long (a new download starts another). */
const IDLE_MS = 15_000;

type Reply =
  | { id: number; op: 'aborted' }
  | { id: number; op: 'written'; bytes: number }
  | { id: number; op: 'done'; sha256: string; bytes: number }
  | { id: number; op: 'error'; message: string; code?: string };

interface Session {
  onReply(reply: Reply): void;
  onCrash(error: Error): void;
}

let worker: Worker | undefined;
let idleTimer: NodeJS.Timeout | undefined;
let nextId = 1;
const sessions = new Map<number, Session>();

/** The shared hashing thread, started on first use; throws where worker threads are not allowed. */
function hashingThread(): Worker {
  if (worker) return worker;
  // No inherited execArgv: a loader or profiler of the main thread has no business here.
  const started = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
  started.on('message', (reply: Reply) => sessions.get(reply.id)?.onReply(reply));
  started.on('error', (error) => lose(started, error));
  started.on('exit', (code) => lose(started, new Error(`the hashing thread exited with code ${code}`)));
  worker = started;
  idle();
  return started;
}

/** A thread that died fails the downloads it served; the next download starts a new one. */
function lose(which: Worker, error: Error): void {
  if (worker !== which) return;
  worker = undefined;
  for (const session of sessions.values()) session.onCrash(error);
  sessions.clear();
}

/** With no download running the thread keeps no process alive, and ends after a while. */
function idle(): void {
  if (sessions.size > 0 || !worker) return;
  worker.unref();
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    if (sessions.size > 0 || !worker) return;
    const ending = worker;
    worker = undefined;
    void ending.terminate();
  }, IDLE_MS).unref();
}

/**
 * Starts the hashing thread ahead of need: it boots in a few tens of ms on a quiet machine (more
 * on a busy one), which then overlaps the redirect and the first bytes. Answers false where
 * worker threads are not allowed.
 */
export function prewarmHashingThread(): boolean {
  try {
    hashingThread();
    return true;
  } catch {
    return false;
  }
}

/**
 * A sink on the hashing thread writing a new file (`wx`), or with `resumeFrom` > 0 appending to a
 * partial one after hashing its first `resumeFrom` bytes (and cutting anything past them):
 * undefined where worker threads are not allowed (the caller hashes inline then). It is usable at
 * once: chunks queue up while a thread still boots or hashes the partial (the caller's write-ahead
 * bound limits them), and an open error (EEXIST, a partial shorter than said...) fails the sink
 * like a write error.
 */
export function openThreadSink(file: string, resumeFrom = 0): HashingSink | undefined {
  let thread: Worker;
  try {
    thread = hashingThread();
  } catch {
    return undefined;
  }
  clearTimeout(idleTimer);
  thread.ref(); // a download waiting on the thread keeps the process alive
  const id = nextId++;
  const sink = new ThreadSink(thread, id, () => {
    sessions.delete(id);
    idle();
  });
  sessions.set(id, sink);
  thread.postMessage({ op: 'open', id, path: file, resumeFrom });
  return sink;
}

/**
 * The SHA-256 and size of a whole file, read and hashed on the hashing thread (a 400 MiB file
 * takes a second or two of CPU, which this thread keeps for the terminal and the network).
 * Undefined where worker threads are not allowed; rejects with the read error (ENOENT...).
 */
export function hashFileOnThread(file: string): Promise<{ sha256: string; sizeBytes: number }> | undefined {
  let thread: Worker;
  try {
    thread = hashingThread();
  } catch {
    return undefined;
  }
  clearTimeout(idleTimer);
  thread.ref();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const settle = () => {
      sessions.delete(id);
      idle();
    };
    sessions.set(id, {
      onReply(reply) {
        settle();
        if (reply.op === 'done') resolve({ sha256: reply.sha256, sizeBytes: reply.bytes });
        else if (reply.op === 'error') reject(Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {}));
        else reject(new Error(`the hashing thread answered ${reply.op}`));
      },
      onCrash(error) {
        settle();
        reject(error);
      },
    });
    thread.postMessage({ op: 'digest', id, path: file });
  });
}

class ThreadSink implements HashingSink, Session {
  private readonly thread: Worker;
  private readonly id: number;
  private readonly release: () => void;
  private posted = 0;
  private written = 0;
  private failure: { error: Error } | undefined;
  private ended = false;
  private settleEnd: { resolve: (reply: Reply) => void; reject: (error: Error) => void } | undefined;
  private wakeDrained: (() => void) | undefined;

  constructor(thread: Worker, id: number, release: () => void) {
    this.thread = thread;
    this.id = id;
    this.release = release;
  }

  get pendingBytes(): number {
    return this.posted - this.written;
  }

  write(chunk: Uint8Array): void {
    if (this.failure || this.ended) return;
    // A chunk read from a stream belongs to its reader (byte streams, as fetch bodies are,
    // transfer every chunk they enqueue), so its memory moves to the thread. A view into a
    // larger buffer (a Buffer pool slice) is copied first: the rest of it is not ours to move.
    const { buffer } = chunk;
    const whole = buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength && !isMarkedAsUntransferable(buffer);
    const own = whole ? chunk : new Uint8Array(chunk);
    this.posted += own.byteLength;
    this.thread.postMessage({ op: 'chunk', id: this.id, chunk: own }, [own.buffer as ArrayBuffer]);
  }

  drained(): Promise<void> {
    if (this.failure || this.pendingBytes === 0) return Promise.resolve();
    return new Promise<void>((resolve) => (this.wakeDrained = resolve));
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }

  async finish(): Promise<{ sha256: string; sizeBytes: number }> {
    const reply = await this.end('end');
    if (reply.op !== 'done') throw new Error(`the hashing thread answered ${reply.op}`);
    return { sha256: reply.sha256, sizeBytes: reply.bytes };
  }

  async abort(): Promise<void> {
    // After a failure the thread has already closed the file; a crashed thread answers nothing.
    if (this.failure || this.ended) return;
    await this.end('abort').catch(() => {});
  }

  private end(op: 'end' | 'abort'): Promise<Reply> {
    this.throwIfFailed();
    this.ended = true;
    const ended = new Promise<Reply>((resolve, reject) => (this.settleEnd = { resolve, reject }));
    this.thread.postMessage({ op, id: this.id });
    return ended;
  }

  onReply(reply: Reply): void {
    switch (reply.op) {
      case 'written':
        this.written = reply.bytes;
        this.wake();
        return;
      case 'error':
        this.fail(Object.assign(new Error(reply.message), reply.code ? { code: reply.code } : {}));
        return;
      default:
        // 'done' or 'aborted': the thread has closed the file.
        this.written = this.posted;
        this.release();
        this.settleEnd?.resolve(reply);
    }
  }

  onCrash(error: Error): void {
    this.fail(error);
  }

  /** The thread closed the file (or died): nothing more will be written. */
  private fail(error: Error): void {
    this.failure ??= { error };
    this.release();
    this.settleEnd?.reject(error);
    this.wake();
  }

  private wake(): void {
    const wake = this.wakeDrained;
    this.wakeDrained = undefined;
    wake?.();
  }
}
