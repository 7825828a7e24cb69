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
  let checkDeadlines: (() => void) | undefined;
  // As often as Node would check the deadlines too (its option is set on the server, untyped).
  const nodePeriod = (server as Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval ?? 1000;
  const period = Math.max(50, Math.min(1000, stallMs / 4, nodePeriod));
  server.once('listening', () => {
    checkDeadlines = takeDeadlineCheck(server);
  });
  const look = () => {
    checkDeadlines?.();
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
    timer ??= setInterval(look, period).unref();
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

/**
 * Node checks incomplete requests against their deadlines (`headersTimeout`, `requestTimeout`:
 * a slowloris client) on a timer of its own that runs from listen to close, with connections or
 * without: it woke an idle server every second, and a wake after a quiet second costs about 1 ms
 * of CPU on a loaded 2-core VM (a bare node with a 1 s interval: 1.45 ms/s against 0.3; issue 42).
 * Node has no switch for it, so where its timer is found (the server's
 * `http.server.connectionsCheckingInterval` symbol, Node 18 to 24) it is stopped and its check
 * answered, for the stall watch's timer to run while there are connections (a slow client is one),
 * at least as often. Where it is not found, Node's timer stays.
 */
function takeDeadlineCheck(server: Server): (() => void) | undefined {
  const key = Object.getOwnPropertySymbols(server).find((symbol) => symbol.description === 'http.server.connectionsCheckingInterval');
  const nodeTimer = key ? (server as unknown as Record<symbol, unknown>)[key] : undefined;
  const check = (nodeTimer as { _onTimeout?: unknown } | undefined)?._onTimeout;
  if (typeof check !== 'function') return undefined;
  clearInterval(nodeTimer as NodeJS.Timeout);
  return check as () => void;
}
