import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ErrorBody } from '@svc/schemas';
import { requestIdFrom } from './request-id.ts';

/** Which contract error a request Node refused before it reached Koa becomes. */
function errorFor(code: string | undefined): { status: number; body: Pick<ErrorBody, 'code' | 'error'> } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        body: { code: 'request_header_too_large', error: 'The request headers are larger than this server accepts (SVC_HTTP_MAX_HEADER_BYTES).' },
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return { status: 408, body: { code: 'request_timeout', error: 'The request did not arrive in time; send it again without pausing.' } };
    default:
      return { status: 400, body: { code: 'bad_request', error: 'The request is not valid HTTP.' } };
  }
}

/**
 * `clientError` listener: a request Node refuses itself (headers too large or too slow, bad
 * framing) is answered with the contract's error body and a request id, then the connection
 * closes, instead of Node's bare status line.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable || (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, body } = errorFor(error.code);
  const requestId = requestIdFrom(undefined);
  const payload = JSON.stringify({ ...body, request_id: requestId, ...(status === 408 ? { retryable: true } : {}) });
  socket.end(
    [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      'content-type: application/json; charset=utf-8',
      `content-length: ${Buffer.byteLength(payload)}`,
      `x-request-id: ${requestId}`,
      'x-content-type-options: nosniff',
      'connection: close',
      '',
      payload,
    ].join('\r\n'),
  );
}
