import test from 'ava';
import OpenAI from 'openai';
import { FAKE_RESPONSES_ANSWER } from '@svc/testing/fake-openai-upstream';
import { startUpstreamHarness } from './helpers/inference-upstream-setup.ts';

/**
 * `/v1/models`' `default_for: ["responses"]` and the model that serves a Responses request naming
 * none agree (issue 43). With a `responses` default declared by the operator, that model serves it,
 * passed through; without one, chat's default does, translated (responses-openai.test.ts).
 */
test('with a declared responses default, a Responses request naming no model is passed through to it, as /v1/models says', async (t) => {
  const harness = await startUpstreamHarness({ modelList: 'answer-a,openai-resp=chat+responses', modelsFile: { defaults: { responses: 'openai-resp' } } });
  try {
    const listed = (await fetch(`${harness.svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${harness.svc.operatorToken}` } }).then((answer) =>
      answer.json(),
    )) as { data: Array<{ id: string; default_for: string[] }> };
    t.deepEqual(
      listed.data.filter((model) => model.default_for.includes('responses')).map((model) => model.id),
      ['openai-resp'],
    );
    const openai = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
    const response = await openai.responses.create({ input: 'Hello?' } as Parameters<typeof openai.responses.create>[0] & { stream?: false });
    t.is(response.model, 'openai-resp');
    t.is(response.output_text, FAKE_RESPONSES_ANSWER);
    t.is(harness.fake.requests.filter((request) => request.path === '/v1/responses').length, 1, 'passed through to the upstream');
  } finally {
    await harness.close();
  }
});
