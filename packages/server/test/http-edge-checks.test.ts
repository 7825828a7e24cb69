import { connect } from 'node:net';
import test from 'ava';
import { hostPolicyFrom } from '../src/http/edge-checks.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The checks of a request's head before any route: two `Authorization` or two `Host` headers
 * (400 `duplicate_header`), a `Host` that is none of svc's names while it listens on loopback
 * (403 `host_not_allowed`, DNS rebinding), and a browser `Origin` that is not svc's own on the MCP
 * endpoints (403 `origin_not_allowed`, on every MCP revision).
 */
const APP_ORIGIN = 'https://app.example';
let svc: TestServer;
let port: string;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_ALLOWED_HOSTS: 'svc.internal, .corp.example', SVC_CORS_ORIGINS: APP_ORIGIN } });
  port = new URL(svc.baseUrl).port;
});
test.after.always(async () => {
  await svc?.close();
});

interface Answer {
  status: number;
  headers: string;
  body: string;
  code: string | undefined;
}

/** Sends `head` (request line and header lines, as written) and `body` on a connection of its own, and reads the whole answer. */
function send(head: string, body = ''): Promise<Answer> {
  const socket = connect(Number(port), '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
  return new Promise((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => {
      const [headers = '', rest = ''] = received.split('\r\n\r\n', 2);
      const answerBody = /transfer-encoding: chunked/i.test(headers) ? rest.replace(/^[0-9a-f]+\r\n|\r\n[0-9a-f]+\r\n|\r\n0\r\n\r\n$/gi, '') : rest;
      let code: string | undefined;
      try {
        const parsed = JSON.parse(answerBody) as { code?: string; error?: { data?: { code?: string } } };
        code = parsed.code ?? parsed.error?.data?.code;
      } catch {
        code = undefined;
      }
      resolve({ status: Number(headers.split(' ', 2)[1]), headers, body: answerBody, code });
    });
    const length = Buffer.byteLength(body);
    socket.write(`${head}${length > 0 ? `Content-Length: ${length}\r\n` : ''}Connection: close\r\n\r\n${body}`);
  });
}

const get = (path: string, headerLines: string[]) => send(`GET ${path} HTTP/1.1\r\n${headerLines.map((line) => `${line}\r\n`).join('')}`);

test('two Authorization headers are 400 duplicate_header, even when both are the same; one is served', async (t) => {
  const bearer = `Authorization: Bearer ${svc.operatorToken}`;
  const one = await get('/v1/whoami', [`Host: 127.0.0.1:${port}`, bearer]);
  t.is(one.status, 200, one.body);
  for (const second of [bearer, 'authorization: Bearer someone-else', 'AUTHORIZATION: Basic eDp5']) {
    const two = await get('/v1/whoami', [`Host: 127.0.0.1:${port}`, bearer, second]);
    t.is(two.status, 400, two.body);
    t.is(two.code, 'duplicate_header');
    t.regex(two.body, /Authorization/);
  }
  // On a public route too: which credential was meant is as unknown there.
  const publicRoute = await get('/healthz', [`Host: 127.0.0.1:${port}`, bearer, bearer]);
  t.is(publicRoute.status, 400);
});

test('two Host headers are 400 duplicate_header; one is served', async (t) => {
  t.is((await get('/healthz', [`Host: 127.0.0.1:${port}`])).status, 200);
  const two = await get('/healthz', [`Host: 127.0.0.1:${port}`, 'Host: 127.0.0.1']);
  t.is(two.status, 400, two.body);
  t.is(two.code, 'duplicate_header');
  t.regex(two.body, /Host/);
  const foreignSecond = await get('/healthz', [`Host: 127.0.0.1:${port}`, 'host: evil.example']);
  t.is(foreignSecond.status, 400);
});

test('on loopback, a Host that is none of svc names is 403 host_not_allowed: the contract, the console and unknown paths alike', async (t) => {
  for (const host of ['evil.example', `evil.example:${port}`, 'localhost.evil.example', 'xcorp.example', '127.0.0.1.nip.io']) {
    for (const path of ['/healthz', '/v1/models', '/ui/', '/nowhere']) {
      const answer = await get(path, [`Host: ${host}`]);
      t.is(answer.status, 403, `${host} ${path}: ${answer.body}`);
      t.is(answer.code, 'host_not_allowed', `${host} ${path}`);
    }
  }
});

test('loopback names, IP literals, the public URL host and SVC_ALLOWED_HOSTS are answered, with or without a port', async (t) => {
  const hosts = [
    'localhost',
    `localhost:${port}`,
    'LOCALHOST.',
    `127.0.0.1:${port}`,
    '127.0.0.1',
    `[::1]:${port}`,
    '[::1]',
    'app.localhost',
    '10.1.2.3',
    '[fe80::1]:80',
    'svc.internal',
    `svc.internal:${port}`,
    'corp.example',
    'api.corp.example:443',
  ];
  for (const host of hosts) {
    const answer = await get('/healthz', [`Host: ${host}`]);
    t.is(answer.status, 200, `${host}: ${answer.body}`);
  }
  // The console's files too.
  t.is((await get('/ui/', [`Host: localhost:${port}`])).status, 200);
});

test('the hosts answered: the public URLs hosts; `*` answers any; a server on a non-loopback address checks only when SVC_ALLOWED_HOSTS is set', (t) => {
  const publicUrls = () => ({ baseUrl: 'https://svc.example.com', apiUrl: 'https://api.svc.example.com:8443' });
  const loopback = hostPolicyFrom({ listenHost: '127.0.0.1', allowedHosts: [], publicUrls });
  t.true(loopback.enforced);
  t.true(loopback.allows('svc.example.com'));
  t.true(loopback.allows('api.svc.example.com:8443'));
  t.false(loopback.allows('other.example.com'));
  t.false(hostPolicyFrom({ listenHost: '127.0.0.1', allowedHosts: ['*'], publicUrls }).enforced);
  t.true(hostPolicyFrom({ listenHost: '::1', allowedHosts: [], publicUrls }).enforced);
  t.true(hostPolicyFrom({ listenHost: 'localhost', allowedHosts: [], publicUrls }).enforced);
  t.false(hostPolicyFrom({ listenHost: '0.0.0.0', allowedHosts: [], publicUrls }).enforced);
  const listed = hostPolicyFrom({ listenHost: '0.0.0.0', allowedHosts: ['svc.internal'], publicUrls });
  t.true(listed.enforced);
  t.false(listed.allows('evil.example'));
  t.true(listed.allows('svc.internal:8787'));
});

const MCP_REVISIONS = ['2025-03-26', '2025-06-18', '2025-11-25'];
const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
const mcpPost = (path: string, lines: string[]) =>
  send(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${lines.map((line) => `${line}\r\n`).join('')}`,
    ping,
  );

test('the MCP endpoints refuse a foreign Origin with 403 origin_not_allowed on every revision, as a JSON-RPC error without an id', async (t) => {
  for (const path of ['/mcp', '/api/mcp']) {
    for (const revision of MCP_REVISIONS) {
      for (const origin of ['https://evil.example', 'http://127.0.0.1.evil.example', 'null', `https://127.0.0.1:${port}.evil.example`]) {
        const answer = await mcpPost(path, [`Origin: ${origin}`, `MCP-Protocol-Version: ${revision}`]);
        t.is(answer.status, 403, `${path} ${revision} ${origin}: ${answer.body}`);
        t.is(answer.code, 'origin_not_allowed');
        const body = JSON.parse(answer.body) as { jsonrpc: string; id: unknown };
        t.is(body.jsonrpc, '2.0');
        t.is(body.id, null);
      }
    }
  }
});

test('the MCP endpoints serve no Origin (the SDK clients), svc own origin, a loopback origin and SVC_CORS_ORIGINS', async (t) => {
  for (const path of ['/mcp', '/api/mcp']) {
    for (const origin of [undefined, new URL(svc.baseUrl).origin, 'http://localhost:5173', 'http://[::1]:3000', APP_ORIGIN]) {
      const answer = await mcpPost(path, origin ? [`Origin: ${origin}`, 'MCP-Protocol-Version: 2025-06-18'] : ['MCP-Protocol-Version: 2025-06-18']);
      t.not(answer.status, 403, `${path} ${origin}: ${answer.body}`);
      t.true(answer.status < 500, `${path} ${origin}: ${answer.body}`);
    }
  }
  // Other routes keep their CORS rules: a foreign Origin still reads /healthz (no CORS headers given).
  t.is((await get('/healthz', [`Host: 127.0.0.1:${port}`, 'Origin: https://evil.example'])).status, 200);
});
