import test from 'ava';
import OpenAI from 'openai';
import { BUILTIN_MODELS_CREATED } from '../src/inference/builtin/builtin-models.ts';
import { startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';

let harness: UpstreamHarness;
let openai: OpenAI;

test.before(async () => {
  harness = await startUpstreamHarness({
    modelList: 'answer-a',
    modelsFile: {
      upstreams: [{ id: 'second', base_url: '{fake}/v1' }],
      models: [{ id: 'acme/answer-chat', upstream: 'second', upstream_model: 'answer-acme', capabilities: ['chat'] }],
    },
  });
  openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
});
test.after.always(async () => {
  await harness?.close();
});

const get = (route: string) => fetch(`${harness.svc.baseUrl}${route}`, { headers: { authorization: `Bearer ${harness.svc.operatorToken}` } });

test("models.retrieve answers a built-in model as an OpenAI Model, with svc's own fields beside it", async (t) => {
  const model = await openai.models.retrieve('svc-extractive-chat');
  t.like(model, { id: 'svc-extractive-chat', object: 'model', created: BUILTIN_MODELS_CREATED, owned_by: 'svc' });
  const own = model as unknown as { engine: string; method: string; tasks: string[] };
  t.like(own, { engine: 'builtin', method: 'classical' });
  t.deepEqual(own.tasks, ['chat']);
});

test('models.retrieve answers an upstream model owned by its upstream, created 0 (svc does not know when the upstream made it)', async (t) => {
  const model = await openai.models.retrieve('answer-a');
  t.like(model, { id: 'answer-a', object: 'model', created: 0, owned_by: 'upstream' });
  t.like(model as unknown as Record<string, unknown>, { engine: 'upstream', method: 'neural' });
});

test('an id with a slash is found, encoded (as the openai client sends it) or not', async (t) => {
  const model = await openai.models.retrieve('acme/answer-chat');
  t.like(model, { id: 'acme/answer-chat', object: 'model', owned_by: 'second' });
  const raw = await get('/v1/models/acme/answer-chat');
  t.is(raw.status, 200);
  t.is(((await raw.json()) as { id: string }).id, 'acme/answer-chat');
});

test('an unknown id is a 404 model_not_found, which the openai client raises as NotFoundError', async (t) => {
  const error = await t.throwsAsync(openai.models.retrieve('no-such-model'), { instanceOf: OpenAI.NotFoundError });
  t.is(error.status, 404);
  const raw = await get('/v1/models/no-such-model');
  t.is(raw.status, 404);
  t.like(await raw.json(), { code: 'model_not_found' });
});

test('the list is { object: "list", data } and every item is the object models.retrieve answers for its id', async (t) => {
  const listed = [];
  for await (const model of openai.models.list()) listed.push(model);
  t.true(listed.length >= 3);
  for (const model of listed) t.deepEqual(await openai.models.retrieve(model.id), model);
  const body = (await (await get('/v1/models')).json()) as { object: string; engines: unknown[] };
  t.is(body.object, 'list');
  t.true(body.engines.length >= 2, "svc's engines stay beside the OpenAI list");
});

test('reading a model takes models:read like the list: no credential is a 401', async (t) => {
  const response = await fetch(`${harness.svc.baseUrl}/v1/models/svc-extractive-chat`);
  t.is(response.status, 401);
});
