import test from 'ava';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';

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
