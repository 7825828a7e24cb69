/**
 * The OpenAI Agents SDK (`@openai/agents`), unchanged, running an agent against svc. The SDK's
 * default model API is OpenAI's Responses API, which svc serves for every chat model: passed
 * through to an upstream that speaks it, translated to Chat Completions for the rest. The only
 * settings are the client's `baseURL` and `apiKey` (a developer key with scope `inference:invoke`,
 * or the operator token). The agent has one function tool, `get_weather`, which runs here, in this
 * process; svc carries the model's call and the tool's output between the two.
 *
 * Run: `SVC_BASE_URL=http://127.0.0.1:8787 SVC_TOKEN=<key> SVC_AGENT_MODEL=<chat model> node src/main.ts`.
 * The model must call tools: a neural upstream model (svc's built-in extractive chat never does).
 */
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';

const baseUrl = process.env.SVC_BASE_URL ?? 'http://127.0.0.1:8787';
const apiKey = process.env.SVC_TOKEN;
const model = process.env.SVC_AGENT_MODEL;
if (!apiKey || !model) {
  process.stderr.write(
    'set SVC_TOKEN to a developer key with scope inference:invoke (or the operator token), and SVC_AGENT_MODEL to a chat model from `svc models`\n',
  );
  process.exit(2);
}

const forecasts: Record<string, string> = { Paris: 'sunny, 21 °C', Oslo: 'snow, -3 °C' };
const calls: string[] = [];
const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city today',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    calls.push(city);
    return forecasts[city] ?? `no forecast for ${city}`;
  },
});

const agent = new Agent({ name: 'Weather agent', instructions: 'Answer questions about the weather; use get_weather.', model, tools: [getWeather] });
// The SDK's own OpenAI client, pointed at svc; tracing is off because it would export to OpenAI.
const runner = new Runner({
  modelProvider: new OpenAIProvider({ openAIClient: new OpenAI({ baseURL: `${baseUrl.replace(/\/$/, '')}/v1`, apiKey }), useResponses: true }),
  tracingDisabled: true,
});
const result = await runner.run(agent, 'What is the weather in Paris?');

process.stdout.write(`tool calls: ${calls.join(', ') || 'none'}\n`);
process.stdout.write(`final output: ${String(result.finalOutput)}\n`);
process.stdout.write(`last response: ${result.lastResponseId ?? 'none'}\n`);
