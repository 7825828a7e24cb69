import type { ServerResponse } from 'node:http';

/**
 * A failure the fake answers every request with while it is set (`setOutage`): an HTTP error in
 * OpenAI's error shape, with a `Retry-After` when given (OpenAI sends one with its 429s), or
 * `drop`, the connection closed before any answer (a crashed or unreachable server).
 */
export type FakeOutage = { status: number; retryAfter?: string } | 'drop';

export function answerOutage(response: ServerResponse, outage: FakeOutage): void {
  if (outage === 'drop') {
    response.socket?.destroy();
    return;
  }
  const rateLimited = outage.status === 429;
  response.writeHead(outage.status, { 'content-type': 'application/json', ...(outage.retryAfter !== undefined ? { 'retry-after': outage.retryAfter } : {}) });
  response.end(
    JSON.stringify({
      error: rateLimited
        ? { message: 'Rate limit reached for requests. Please try again later.', type: 'requests', param: null, code: 'rate_limit_exceeded' }
        : { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null },
    }),
  );
}
