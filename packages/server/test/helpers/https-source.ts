import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate for `names`, made by the openssl CLI (the machine has it). */
export function selfSignedCertificate(names: string[]): { key: string; cert: string } {
  const directory = mkdtempSync(join(tmpdir(), 'svc-cert-'));
  try {
    const keyFile = join(directory, 'key.pem');
    const certFile = join(directory, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${names[0]}`,
        '-addext',
        `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}`,
        '-keyout',
        keyFile,
        '-out',
        certFile,
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

export type Route = (request: IncomingMessage, response: ServerResponse) => void;

/** A PDF source the server fetches over real TLS on loopback; `routes` by path. */
export interface HttpsSource {
  port: number;
  /** TCP connections accepted so far (a refused URL must open none). */
  connections: number;
  /** Paths whose response was cut off before all of it was sent (the fetcher hung up). */
  cutOff: string[];
  close(): Promise<void>;
}

export async function startHttpsSource(certificate: { key: string; cert: string }, routes: Record<string, Route>): Promise<HttpsSource> {
  const source: HttpsSource = { port: 0, connections: 0, cutOff: [], close: () => Promise.resolve() };
  const server: Server = createServer(certificate, (request, response) => {
    const path = new URL(request.url ?? '/', 'https://source').pathname;
    response.on('close', () => {
      if (!response.writableFinished) source.cutOff.push(path);
    });
    const route = routes[path];
    if (route) route(request, response);
    else response.writeHead(404).end();
  });
  server.on('connection', () => (source.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  source.port = (server.address() as AddressInfo).port;
  source.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return source;
}

/** Writes `body` in 1 MiB chunks without a Content-Length (chunked transfer encoding). */
export function sendChunked(response: ServerResponse, body: Buffer): void {
  response.writeHead(200, { 'content-type': 'application/pdf' });
  for (let offset = 0; offset < body.length; offset += 1 << 20) response.write(body.subarray(offset, offset + (1 << 20)));
  response.end();
}
