import type { ResponseObject } from '@svc/schemas';
import test from 'ava';
import { loadConfig, ConfigError } from '../src/index.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** The operator's settings of stored responses: storing by default or not, and the retention in days. */
let svc: TestServer;

test.before(async () => {
  svc = await startTestServer({ env: { SVC_RESPONSES_STORE_DEFAULT: 'false', SVC_RESPONSES_RETENTION_DAYS: '1' } });
});
test.after.always(async () => {
  await svc?.close();
});

const create = (body: Record<string, unknown>) =>
  svc.operator.responses.create({ body: { model: 'svc-extractive-chat', input: 'What is svc?', ...body } }) as Promise<{ id: string; store: boolean }>;
// Without `stream=true` the answer is the response's JSON, never a stream.
const retrieve = async (id: string) => (await svc.operator.responses.retrieve({ params: { response_id: id } })) as ResponseObject;

test('with SVC_RESPONSES_STORE_DEFAULT=false a response is kept only when the request says store: true', async (t) => {
  const unasked = await create({});
  t.false(unasked.store);
  await t.throwsAsync(retrieve(unasked.id), { message: /No stored response/ });
  const asked = await create({ store: true });
  t.true(asked.store);
  t.is((await retrieve(asked.id)).id, asked.id);
});

test('SVC_RESPONSES_RETENTION_DAYS=1: kept a second short of a day, gone at a day', async (t) => {
  const { id } = await create({ store: true });
  const age = (interval: string) =>
    svc.server.deps.database.sequelize.query(`UPDATE responses SET created_at = clock_timestamp() - interval '${interval}' WHERE id = :id`, {
      replacements: { id },
    });
  await age('1 day - 1 second');
  t.is((await retrieve(id)).id, id);
  await age('1 day');
  await t.throwsAsync(retrieve(id), { message: /No stored response/ });
});

test('a bad setting stops start-up naming the variable', (t) => {
  const error = t.throws(() => loadConfig({ SVC_RESPONSES_RETENTION_DAYS: '0', SVC_RESPONSES_STORE_DEFAULT: 'sometimes' }), { instanceOf: ConfigError });
  t.true(
    error!.issues.some((issue) => issue.startsWith('SVC_RESPONSES_RETENTION_DAYS="0": expected days from 1 to 3650')),
    error!.message,
  );
  t.true(
    error!.issues.some((issue) => issue.startsWith('SVC_RESPONSES_STORE_DEFAULT="sometimes"')),
    error!.message,
  );
});
