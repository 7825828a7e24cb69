import type { IncomingMessage, ServerResponse } from 'node:http';

/** Sends a request a test proxy received on to `origin`, as it came (no redirect followed). */
export async function forward(request: IncomingMessage, origin: string): Promise<Response> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<
    string,
    string
  >;
  return fetch(`${origin}${request.url}`, { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined, redirect: 'manual' });
}

/** Answers with what the origin answered (hop-by-hop and length headers recomputed). */
export async function relay(response: ServerResponse, upstream: Response, body?: Buffer): Promise<void> {
  const bytes = body ?? Buffer.from(await upstream.arrayBuffer());
  const headers: Record<string, string> = {};
  upstream.headers.forEach((value, name) => {
    if (!['content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(name)) headers[name] = value;
  });
  response.writeHead(upstream.status, headers);
  response.end(bytes);
}
