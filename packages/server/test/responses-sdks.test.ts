import test from 'ava';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, stepCountIs, streamText, tool } from 'ai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { FAKE_TOOL_ARGUMENTS, toolAnswer } from '@svc/testing/fake-openai-upstream';
import { startUpstreamHarness, type UpstreamHarness } from './helpers/inference-upstream-setup.ts';

/*
 * Agent SDKs whose default is the Responses API, unchanged, against svc over the fake upstream:
 * `tool-a` speaks only Chat Completions (svc translates), `resp-a` speaks the Responses API
 * (svc passes through). Each runs a tool round trip to its final answer.
 */
let harness: UpstreamHarness;
const weather = { temp: 21, sky: 'clear' };
const weatherJson = JSON.stringify(weather);

test.before(async () => {
  setTracingDisabled(true);
  harness = await startUpstreamHarness({ modelList: 'tool-a,resp-a=chat+responses' });
});
test.after.always(async () => {
  await harness?.close();
});

const aiSdkProvider = () => createOpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken });
const aiSdkWeather = () =>
  tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }),
    execute: async ({ city }) => (city === 'Paris' ? weather : { error: 'unknown city' }),
  });

test.serial('@ai-sdk/openai: openai(id) (the Responses API) runs generateText with a tool to the final answer', async (t) => {
  const provider = aiSdkProvider();
  const result = await generateText({
    model: provider('tool-a'),
    prompt: 'Weather in Paris?',
    tools: { get_weather: aiSdkWeather() },
    stopWhen: stepCountIs(3),
  });
  t.is(result.text, toolAnswer(weatherJson));
  t.is(result.steps.length, 2);
  t.deepEqual(
    result.steps[0]!.toolCalls.map((call) => [call.toolName, call.input]),
    [['get_weather', JSON.parse(FAKE_TOOL_ARGUMENTS)]],
  );
  t.true(harness.fake.requests.some((request) => request.path === '/v1/chat/completions' && request.body.model === 'tool-a'));
});

test.serial('@ai-sdk/openai: streamText with a tool streams the final answer', async (t) => {
  const provider = aiSdkProvider();
  const result = streamText({ model: provider('tool-a'), prompt: 'Weather in Paris?', tools: { get_weather: aiSdkWeather() }, stopWhen: stepCountIs(3) });
  let streamed = '';
  for await (const piece of result.textStream) streamed += piece;
  t.is(streamed, toolAnswer(weatherJson));
  t.is((await result.steps).length, 2);
});

async function runAgent(model: string) {
  const client = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }), tracingDisabled: true });
  const getWeather = agentTool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => (city === 'Paris' ? weatherJson : 'unknown city'),
  });
  const agent = new Agent({ name: 'Weather agent', instructions: 'Answer with the weather.', model, tools: [getWeather] });
  return runner.run(agent, 'Weather in Paris?');
}

test.serial('@openai/agents: an agent with a tool runs to its final output through a chat-only upstream (translation)', async (t) => {
  const result = await runAgent('tool-a');
  t.is(result.finalOutput, toolAnswer(weatherJson));
  const chat = harness.fake.requests.filter((request) => request.path === '/v1/chat/completions' && request.body.model === 'tool-a').at(-1)!;
  t.like((chat.body.messages as Array<Record<string, unknown>>).at(-1), { role: 'tool', content: weatherJson });
});

test.serial('@openai/agents: the same agent through an upstream that speaks /v1/responses (pass-through)', async (t) => {
  const result = await runAgent('resp-a');
  t.is(result.finalOutput, toolAnswer(weatherJson));
  const passed = harness.fake.requests.filter((request) => request.path === '/v1/responses' && request.body.model === 'resp-a');
  t.true(passed.length >= 2);
  t.like((passed.at(-1)!.body.input as Array<Record<string, unknown>>).at(-1), { type: 'function_call_output', output: weatherJson });
});

test.serial('@openai/agents: each model call of a streamed run is a background response (providerData background: true), read back by id', async (t) => {
  // The SDK has no background option of its own: providerData is spread into the request. Only a
  // streamed run reads a background answer to its end (its events come as they are made); the
  // non-streamed getResponse takes the first answer, `in_progress` with no output, and does not poll
  // (in @openai/agents 0.20.0 such a run asks again each turn until `Max turns (10) exceeded`).
  const client = new OpenAI({ baseURL: `${harness.svc.baseUrl}/v1`, apiKey: harness.svc.operatorToken, maxRetries: 0 });
  const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }), tracingDisabled: true });
  const getWeather = agentTool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => (city === 'Paris' ? weatherJson : 'unknown city'),
  });
  const agent = new Agent({
    name: 'Weather agent',
    instructions: 'Answer with the weather.',
    model: 'tool-a',
    tools: [getWeather],
    modelSettings: { providerData: { background: true } },
  });
  const result = await runner.run(agent, 'Weather in Paris?', { stream: true });
  await result.completed;
  t.is(result.finalOutput, toolAnswer(weatherJson));
  const ids = result.rawResponses.map((response) => response.responseId);
  t.is(ids.length, 2);
  for (const id of ids) t.like(await client.responses.retrieve(id!), { id, background: true, status: 'completed' });
});
