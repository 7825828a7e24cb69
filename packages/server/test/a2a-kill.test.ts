import test from 'ava';
import { slowPdf } from '@svc/testing/pdf-fixtures';
import { killAllServerProcesses, startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { waitUntil } from '@svc/testing/wait-until';

/**
 * `kill -9` of the `svc-server` process running an A2A skill (issue 43): the task is on the
 * durable store, so another replica answers it, and it ends `TASK_STATE_FAILED` with its reason
 * once the dead runner's lease runs out (2 s here, reaped by a backstop of 200 ms), never left
 * `TASK_STATE_WORKING`. On PostgreSQL the other replica runs already; the embedded database
 * belongs to one process at a time, so there it is the next process on the same data directory.
 * A skill's run is not taken up again (it answers the request that started it), so failed is its
 * only end. The skill is pdf-extract of a PDF that takes the engine many seconds.
 */
const TOKEN = 'a2a-kill-operator-token-0123456789abcdef';
const TASKS = 3;
/** The lease and a backstop turn, with room for a loaded machine and the survivor's start. */
const ENDED_WITHIN_MS = 30_000;
let database: TestDatabase;

test.before(async () => {
  database = await createTestDatabase();
});
test.after.always(async () => {
  killAllServerProcesses();
  await database?.drop();
});

const env = {
  SVC_OPERATOR_TOKEN: TOKEN,
  SVC_TASKS_LEASE_SECONDS: '2',
  SVC_TASKS_BACKSTOP_MS: '200',
  SVC_PDF_RATE_LIMIT: '0',
  SVC_PDF_PARSE_TIMEOUT_MS: '120000',
};
type RpcAnswer = { result?: { task?: { id: string; status: TaskStatus } } & { id?: string; status?: TaskStatus }; error?: unknown };
type TaskStatus = { state: string; message?: { parts?: Array<{ text?: string }> } };

async function rpc(server: ServerProcess, method: string, params: unknown): Promise<RpcAnswer> {
  const response = await fetch(`${server.baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: method, method, params }),
  });
  return (await response.json()) as RpcAnswer;
}

test(`a replica killed with SIGKILL while it runs ${TASKS} A2A skills: another answers each failed with its reason, none left working`, async (t) => {
  const first = await startServerProcess(database, env);
  const survivorStarting = database.kind === 'postgres' ? startServerProcess(database, env) : undefined;
  const pdf = slowPdf(100, 40_000, { shortText: true }).toString('base64');
  const ids: string[] = [];
  for (let index = 0; index < TASKS; index++) {
    const started = await rpc(first, 'SendMessage', {
      message: {
        messageId: `m-kill-${index}`,
        role: 'ROLE_USER',
        parts: [{ data: { data_base64: pdf, max_pages: 100 } }],
        metadata: { skill: 'pdf-extract' },
      },
      configuration: { returnImmediately: true },
    });
    t.is(started.result?.task?.status.state, 'TASK_STATE_WORKING', JSON.stringify(started).slice(0, 500));
    ids.push(started.result!.task!.id);
  }
  // Still running when the process dies: the PDF takes the engine far longer than these reads.
  for (const id of ids) {
    const read = await rpc(first, 'GetTask', { id });
    t.is(read.result?.status?.state, 'TASK_STATE_WORKING', JSON.stringify(read).slice(0, 800));
  }
  await first.kill();
  const killedAt = performance.now();
  const survivor = (await survivorStarting) ?? (await startServerProcess(database, env));
  try {
    for (const id of ids) {
      const ended = await waitUntil(
        () => `task ${id} to end on the survivor`,
        async () => {
          const status = (await rpc(survivor, 'GetTask', { id })).result?.status;
          return status && status.state !== 'TASK_STATE_WORKING' && status.state !== 'TASK_STATE_SUBMITTED' && status;
        },
        { timeoutMs: ENDED_WITHIN_MS, intervalMs: 100 },
      );
      t.is(ended.state, 'TASK_STATE_FAILED', id);
      t.regex(ended.message?.parts?.map((part) => part.text ?? '').join(' ') ?? '', /runner stopped/, `${id} says why`);
    }
    t.log(`${TASKS} tasks read failed ${Math.round(performance.now() - killedAt)} ms after the kill (lease 2 s, backstop 200 ms)`);
  } finally {
    await survivor.stop();
  }
});
