import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Where a connection's writing stood when last looked at. */
interface Progress {
  /** Bytes whose writes completed (written minus still queued in the stream). */
  taken: number;
  /** Bytes of the write under way that the kernel has not taken yet (libuv's queue, live). */
  unsent: number;
  since: number;
}

/**
 * libuv's count of the bytes of the current write the kernel has not taken: it falls as a
 * large write goes out piece by piece, where the stream's own counts only move once the whole
 * write completes (a 12 MB answer is one write).
 */
function unsentOf(socket: Socket): number {
  return (socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
}

/**
 * Destroys a connection that has bytes waiting to go out and has taken none of them for
 * `stallMs` (SVC_HTTP_RESPONSE_STALL_MS): a client that asks for a large answer and never reads
 * it would otherwise hold the answer's buffers, and its socket, for as long as it likes. An idle
 * connection (nothing queued: a long poll, keep-alive between requests) is never a stall. One
 * timer per listener walks its connections, so no request pays for the watch; it runs only while
 * the listener has connections, so an idle server has no timer for it (issue 42).
 */
export function watchResponseStalls(server: Server, stallMs: number): () => void {
  const progress = new Map<Socket, Progress>();
  let timer: NodeJS.Timeout | undefined;
  const look = () => {
    const now = performance.now();
    for (const [socket, mark] of progress) {
      const queued = socket.writableLength;
      const taken = socket.bytesWritten - queued;
      const unsent = unsentOf(socket);
      if (queued === 0 || taken !== mark.taken || unsent !== mark.unsent) {
        mark.taken = taken;
        mark.unsent = unsent;
        mark.since = now;
      } else if (now - mark.since >= stallMs) {
        forget(socket);
        socket.destroy();
      }
    }
  };
  const forget = (socket: Socket) => {
    progress.delete(socket);
    if (progress.size > 0) return;
    clearInterval(timer);
    timer = undefined;
  };
  let stopped = false;
  server.on('connection', (socket: Socket) => {
    if (stopped) return;
    progress.set(socket, { taken: 0, unsent: 0, since: performance.now() });
    socket.once('close', () => forget(socket));
    timer ??= setInterval(look, Math.max(50, Math.min(1000, stallMs / 4))).unref();
  });
  const stop = () => {
    stopped = true;
    progress.clear();
    clearInterval(timer);
    timer = undefined;
  };
  server.once('close', stop);
  return stop;
}
