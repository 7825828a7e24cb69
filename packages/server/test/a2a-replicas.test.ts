import test from 'ava';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { createKey, signInAgent } from '@svc/testing/identity';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { selfSignedCertificate, startHttpsSource } from './helpers/https-source.ts';

/**
 * A2A tasks live in the database, never in a process: a task one `svc-server` process ran is read
 * by another (@a2a-js/sdk, 1.0 default and 0.3 legacy mode). On PostgreSQL (TEST_DATABASE_URL) both
 * replicas run at once; the embedded database belongs to one process at a time (its data
 * directory is locked), so there the first process stops and a second starts on the same data.
 */
const TOKEN = 'a2a-replicas-operator-token-0123456789abcdef';
let database: TestDatabase;
const started: ServerProcess[] = [];

test.before(async () => {
  database = await createTestDatabase();
});
test.after.always(async () => {
  for (const server of started) await server.stop().catch(() => undefined);
  killAllServerProcesses();
  await database?.drop();
});

const start = async () => {
  const server = await startServerProcess(database, { SVC_OPERATOR_TOKEN: TOKEN });
  started.push(server);
  return server;
};

async function clientOf(server: ServerProcess, legacy: boolean): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${TOKEN}`);
    return fetch(input, { ...init, headers });
  };
  const legacyCompat = legacy ? { enabled: true } : undefined;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
    }),
  );
  const card = await new DefaultAgentCardResolver({ fetchImpl, legacyCompat }).resolve(server.baseUrl);
  const version = legacy ? '0.3' : '1.0';
  return factory.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((entry) => entry.protocolVersion === version) });
}

test('a task run on one process is read by GetTask and tasks/get on another', async (t) => {
  const a = await start();
  const tasks: Task[] = [];
  for (const legacy of [false, true]) {
    const client = await clientOf(a, legacy);
    const answer = (await client.sendMessage(
      SendMessageRequest.fromJSON({
        message: {
          messageId: `m-${legacy}`,
          role: 'ROLE_USER',
          parts: [{ text: 'PostgreSQL stores rows. Replicas share one database. Caches are rebuilt from it.' }],
          metadata: { skill: 'summarize' },
        },
      }),
    )) as Task;
    t.is(answer.status?.state, TaskState.TASK_STATE_COMPLETED);
    tasks.push(answer);
  }
  if (database.kind !== 'postgres') await a.stop();
  const b = await start();
  for (const legacy of [false, true]) {
    const reader = await clientOf(b, legacy);
    for (const task of tasks) {
      const read = await reader.getTask({ tenant: '', id: task.id, historyLength: undefined });
      t.is(read.id, task.id);
      t.is(read.status?.state, TaskState.TASK_STATE_COMPLETED);
      t.deepEqual(read.artifacts, task.artifacts, 'the same artifacts, whichever version wrote or reads them');
    }
  }
});

test('tasks/cancel on one replica stops the work running on another', async (t) => {
  // In-process replicas (the PDF source needs the test seam); on the embedded database, whose data
  // directory one server holds, both "replicas" are the one server.
  const shared = await createTestDatabase();
  const certificate = selfSignedCertificate(['pdf.test']);
  let stalled = 0;
  const source = await startHttpsSource(certificate, {
    '/stall.pdf': (_request, response) => {
      stalled++;
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': '100000' });
      response.write('%PDF-1.4\n');
      response.on('close', () => stalled--);
    },
  });
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  const options = {
    database: shared,
    env: { SVC_PDF_FETCH_TIMEOUT_MS: '60000', SVC_PDF_RATE_LIMIT: '0', SVC_SIGNING_SECRET: 'a2a-replicas-secret-0123456789-abcdefghij' },
    testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  };
  const servers: TestServer[] = [await startTestServer(options)];
  try {
    if (shared.kind === 'postgres') servers.push(await startTestServer(options));
    const [a, b] = [servers[0]!, servers.at(-1)!];
    const agent = await signInAgent(a);
    const key = (await createKey(agent.client, ['inference:invoke'])).secret;
    const rpc = async (server: TestServer, body: unknown) => {
      const response = await fetch(`${server.baseUrl}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
      return (await response.json()) as any;
    };
    const started = await rpc(a, {
      jsonrpc: '2.0',
      id: 's',
      method: 'SendMessage',
      params: {
        message: { messageId: 'm-stall', role: 'ROLE_USER', parts: [{ url: `https://pdf.test:${source.port}/stall.pdf` }], metadata: { skill: 'pdf-extract' } },
        configuration: { returnImmediately: true },
      },
    });
    const id = started.result.task.id as string;
    await waitUntil('the PDF download started on the first replica', () => stalled === 1, { timeoutMs: 10_000 });
    const canceled = await rpc(b, { jsonrpc: '2.0', id: 'c', method: 'CancelTask', params: { id } });
    t.is(canceled.result.status.state, 'TASK_STATE_CANCELED');
    await waitUntil('the first replica aborted the download', () => stalled === 0, { timeoutMs: 10_000 });
    t.is((await rpc(a, { jsonrpc: '2.0', id: 'g', method: 'GetTask', params: { id } })).result.status.state, 'TASK_STATE_CANCELED');
  } finally {
    for (const server of servers) await server.close();
    await source.close();
    await shared.drop();
  }
});
