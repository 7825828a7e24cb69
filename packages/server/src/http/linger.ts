import type { IncomingMessage } from 'node:http';
import { hasBody } from './read-body.ts';

/** What a client may still send after an early answer before its connection is cut (nginx `lingering_close`). */
export const LINGER_MAX_BYTES = 32 * 1024 * 1024;
export const LINGER_MAX_MS = 10_000;

/**
 * After an answer given before the body was read: closing now, with the client's bytes still
 * arriving, makes the kernel reset the connection, and the client sees EPIPE or ECONNRESET
 * instead of the answer. So the rest of the body is read and thrown away, nothing kept, until
 * it ends (the connection may then serve another request) or passes the bytes or time bound.
 */
export function lingerOnUnreadBody(request: IncomingMessage): void {
  if (request.complete || request.socket.destroyed || !hasBody(request)) return;
  let discarded = 0;
  const cut = () => request.socket.destroy();
  const timer = setTimeout(cut, LINGER_MAX_MS);
  const done = () => clearTimeout(timer);
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.byteLength;
    if (discarded > LINGER_MAX_BYTES) cut();
  });
  request.once('end', done).once('close', done);
  request.resume();
}
