import test from 'ava';
import fc from 'fast-check';
import { agentTools, contract, fillPath, mcpContract, urlFor, type AgentTool } from '@svc/schemas';
import { invalidVariants, validValue, type JsonSchema } from '@svc/testing/schema-arbitrary';
import { LoopHold } from './helpers/loop-hold.ts';
import { STALL_BUDGET_MS } from './helpers/stall-meter.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The contract fuzzer's way, over MCP: every tool (derived from the contract, so later routes are
 * covered with no new code) gets `tools/call` arguments drawn from its own input schema, valid
 * ones and ones that certainly break it, with no credential and with the operator's. Every answer:
 * never a 5xx; a JSON-RPC answer with a result; a tool result whose success carries
 * `structuredContent` and whose refusal carries the REST error's stable code; no success for
 * arguments the schema refuses; 401 only without a credential; and no event-loop delay past the
 * stall budget. SVC_FUZZ_RUNS (600 in all) bounds it; SVC_FUZZ_SEED replays a run.
 */
const TOTAL_RUNS = Number(process.env.SVC_FUZZ_RUNS ?? 600);
const SEED = process.env.SVC_FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(process.env.SVC_FUZZ_SEED);

let svc: TestServer;
/** The main thread's CPU-time holds (helpers/loop-hold.ts): a thread the machine did not schedule is not a stall. */
let loop: LoopHold;
let worstLoop = { ms: 0, label: '' };
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  loop = new LoopHold();
});
test.after.always(async () => {
  loop?.stop();
  await svc?.close();
});

async function callTool(name: string, args: unknown, authorization: string | undefined) {
  const response = await fetch(urlFor(svc.server.urls(), mcpContract.endpoint), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, text: await response.text() };
}

type Result = { isError?: boolean; structuredContent?: { code?: unknown } };

function problemOf(answer: { status: number; text: string }, invalid: boolean, authorized: boolean): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}`;
  if (answer.status === 401) return authorized ? 'a 401 with a credential' : undefined;
  // The adapter's body guards (a lone surrogate, an oversized body) refuse the whole JSON-RPC request, as JSON-RPC errors.
  if (answer.status === 400 || answer.status === 413) {
    const refusal = JSON.parse(answer.text) as { error?: { code?: number; data?: { code?: string } } };
    return refusal.error?.code === -32600 && typeof refusal.error.data?.code === 'string'
      ? undefined
      : `answered ${answer.status}: ${answer.text.slice(0, 200)}`;
  }
  if (answer.status !== 200) return `answered ${answer.status}: ${answer.text.slice(0, 200)}`;
  const message = JSON.parse(answer.text) as { result?: Result; error?: { code: number } };
  // Arguments that are not an object are refused by the protocol itself (-32602).
  if (message.error) return invalid ? undefined : `a JSON-RPC error ${message.error.code} for valid arguments`;
  const result = message.result!;
  if (result.isError) return typeof result.structuredContent?.code === 'string' ? undefined : `a refusal without a code: ${answer.text.slice(0, 200)}`;
  if (invalid) return `a success for arguments the schema refuses: ${answer.text.slice(0, 200)}`;
  return result.structuredContent ? undefined : 'a success without structuredContent';
}

test.serial('every MCP tool is fuzzed from its own input schema', async (t) => {
  const tools = agentTools(contract);
  const runsPerTool = Math.max(5, Math.ceil(TOTAL_RUNS / tools.length));
  t.log(`seed ${SEED} (SVC_FUZZ_SEED replays it), ${tools.length} tools, ${runsPerTool} generated calls each`);
  const credentials = [undefined, `Bearer ${svc.operatorToken}`];
  for (const tool of tools) {
    const schema = tool.inputSchema as JsonSchema;
    await fc.assert(
      fc.asyncProperty(validValue(schema, schema), fc.nat(), fc.boolean(), async (valid, pick, authorized) => {
        // A query parameter travels as text, so a number where a string is wanted reads as that
        // string, as over REST: wrong-typed query members are not certainly invalid there.
        const variants = invalidVariants(schema, schema, valid).filter(
          ({ why }) => !(why.endsWith('of the wrong type') && tool.placement[why.slice(0, -' of the wrong type'.length)] === 'query'),
        );
        const invalid = pick % 2 === 1 && variants.length > 0 ? variants[pick % variants.length] : undefined;
        const args = invalid ? invalid.value : valid;
        const label = `${tool.name} ${invalid ? `(${invalid.why})` : '(valid)'} ${JSON.stringify(args).slice(0, 200)}`;
        const authorization = authorized ? credentials[1] : credentials[0];
        const answer = await callTool(tool.name, args, authorization);
        let loopMs = loop.take();
        if (loopMs > STALL_BUDGET_MS) {
          // Other load on the machine can hold a window too: a stall this call causes repeats when it is sent again.
          await callTool(tool.name, args, authorization).catch(() => undefined);
          loopMs = Math.min(loopMs, loop.take());
        }
        if (loopMs > worstLoop.ms) worstLoop = { ms: loopMs, label };
        const problem = problemOf(answer, invalid !== undefined, authorized);
        if (problem) throw new Error(`${label}: ${problem}`);
      }),
      { numRuns: runsPerTool, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
  }
  t.log(`worst event-loop delay ${worstLoop.ms.toFixed(0)} ms during ${worstLoop.label}`);
  t.true(worstLoop.ms <= STALL_BUDGET_MS, `the event loop was held ${worstLoop.ms.toFixed(0)} ms during ${worstLoop.label}`);
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
});

/** The REST request a tool's arguments stand for, built the way a REST client writes it. */
function restUrlOf(tool: AgentTool, args: Record<string, unknown>): string {
  const params: Record<string, unknown> = {};
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (tool.placement[name] === 'params') params[name] = value;
    else if (Array.isArray(value)) for (const item of value) query.append(name, String(item));
    else if (value !== undefined && value !== null && value !== '') query.append(name, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  const search = query.toString();
  const { baseUrl, apiUrl } = svc.server.urls();
  return `${tool.route.surface === 'api' ? apiUrl : baseUrl}${fillPath(tool.route.path, params)}${search ? `?${search}` : ''}`;
}

const withoutRequestId = (body: unknown) => {
  if (!body || typeof body !== 'object') return body;
  const { request_id: _ignored, ...rest } = body as Record<string, unknown>;
  return rest;
};

test.serial('every read-only tool answers what its REST route answers, for arguments drawn from its schema', async (t) => {
  const authorization = `Bearer ${svc.operatorToken}`;
  let compared = 0;
  const moving = new Set<string>();
  for (const tool of agentTools(contract).filter((candidate) => candidate.annotations.readOnlyHint)) {
    const schema = tool.inputSchema as JsonSchema;
    for (const args of fc.sample(validValue(schema, schema), { numRuns: 3, seed: SEED }) as Array<Record<string, unknown>>) {
      // A path parameter the URL cannot carry (empty, `.` or `..`) has no REST twin to compare with.
      let url: string;
      try {
        url = restUrlOf(tool, args);
      } catch {
        continue;
      }
      const restAnswer = async () => {
        const rest = await fetch(url, { headers: { authorization } });
        return {
          status: rest.status,
          body: withoutRequestId((rest.headers.get('content-type') ?? '').includes('json') ? await rest.json() : await rest.text()),
        };
      };
      const before = await restAnswer();
      const answer = await callTool(tool.name, args, authorization);
      const after = await restAnswer();
      if (answer.status !== 200) {
        // The body guard refused the whole call (a lone surrogate): REST refuses the same input.
        t.true(answer.status === 400 && before.status >= 400, `${tool.name}: MCP ${answer.status}, REST ${before.status}: ${answer.text.slice(0, 200)}`);
        continue;
      }
      const result = (JSON.parse(answer.text) as { result?: { isError?: boolean; structuredContent?: unknown } }).result;
      if (!result) continue;
      // An answer that moves between two identical REST calls (a clock in it) has no fixed value to compare.
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        moving.add(tool.name);
        continue;
      }
      t.is(Boolean(result.isError), before.status >= 400, `${tool.name} ${JSON.stringify(args).slice(0, 200)}: REST ${before.status}`);
      t.deepEqual(withoutRequestId(result.structuredContent), before.body, `${tool.name} ${JSON.stringify(args).slice(0, 200)}`);
      compared++;
    }
  }
  t.log(`${compared} tool calls compared with their REST twins; answers that move between two REST calls: ${[...moving].join(', ') || 'none'}`);
  t.true(compared > 20);
});
