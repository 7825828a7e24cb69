import { connect, createServer, type Server } from 'node:net';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Connection reuse with the server's defaults, by Node's own `fetch` (the undici it bundles),
 * which the OpenAI SDK and most agent SDKs call. That undici (7.10 and later, nodejs/undici#5022)
 * opens a new connection for every request that follows a server's close of a busy connection,
 * so a per-connection request cap (SVC_HTTP_MAX_REQUESTS_PER_SOCKET, 1000 by default until now)
 * turned every request after the thousandth into a connection of its own (TCP, and TLS behind a
 * proxy). The connections are counted by a TCP relay between the client and the server.
 */
let svc: TestServer;
let relay: Server;
let relayUrl: string;
let connections = 0;
test.before(async () => {
  svc = await startTestServer();
  const target = new URL(svc.baseUrl);
  relay = createServer((inbound) => {
    connections++;
    const outbound = connect(Number(target.port), target.hostname);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const address = relay.address() as { port: number };
  relayUrl = `http://127.0.0.1:${address.port}`;
});
test.after.always(async () => {
  relay?.close();
  await svc?.close();
});

test("with the defaults, 2500 requests one after another from Node's fetch go over the connections it opened first", async (t) => {
  const closes: number[] = [];
  for (let index = 0; index < 2500; index++) {
    const response = await fetch(`${relayUrl}/healthz`);
    await response.arrayBuffer();
    if (response.headers.get('connection') !== 'keep-alive') closes.push(index);
  }
  t.deepEqual(closes, [], 'answers that closed their connection');
  // undici's pool opens a second connection early on even for requests sent one at a time (seen: 2).
  t.true(connections <= 2, `${connections} connections`);
});
