import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { mcpContract, urlFor } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * A JSON-RPC batch's time budget (`mcpBatchRules.timeBudgetMs`, shortened here through the test
 * seam): its calls run one after another, and a call whose turn comes after the budget is not run.
 */
const TIME_BUDGET_MS = 1_000;
const UPSTREAM_MS = 400;
let upstream: Server;
const arrivals: number[] = [];
let svc: TestServer;

test.before(async () => {
  // An upstream that answers each chat after UPSTREAM_MS, recording when each arrived.
  upstream = createServer((request, response) => {
    arrivals.push(performance.now());
    request.resume();
    request.once('end', () =>
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            id: 'chatcmpl-slow',
            object: 'chat.completion',
            created: 1_700_000_000,
            model: 'slow-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
      }, UPSTREAM_MS),
    );
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  svc = await startTestServer({
    env: { SVC_UPSTREAM_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, SVC_UPSTREAM_MODELS: 'slow-model=chat' },
    testSeams: { mcpBatchTimeBudgetMs: TIME_BUDGET_MS },
  });
});
test.after.always(async () => {
  await svc?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

type RpcAnswer = { id: number; result?: { isError?: boolean }; error?: { code: number; data?: { code?: string } } };

test('the calls of a batch start only within its time budget; the later ones are not run and say so', async (t) => {
  const calls = 6;
  const batch = Array.from({ length: calls }, (_, index) => ({
    jsonrpc: '2.0',
    id: index + 1,
    method: 'tools/call',
    params: { name: 'inference_chat', arguments: { model: 'slow-model', messages: [{ role: 'user', content: `call ${index}` }] } },
  }));
  const sentAt = performance.now();
  const response = await fetch(urlFor(svc.server.urls(), mcpContract.endpoint), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-03-26',
      authorization: `Bearer ${svc.operatorToken}`,
    },
    body: JSON.stringify(batch),
  });
  t.is(response.status, 200);
  const answers = ((await response.json()) as RpcAnswer[]).sort((a, b) => a.id - b.id);
  const ran = answers.filter((answer) => answer.result !== undefined);
  const notRun = answers.filter((answer) => answer.error?.data?.code === 'mcp_batch_time_spent');
  t.true(
    ran.every((answer) => answer.result?.isError !== true),
    JSON.stringify(ran),
  );
  t.is(ran.length + notRun.length, calls);
  t.true(ran.length >= 1 && notRun.length >= 1, `${ran.length} ran, ${notRun.length} not run`);
  t.deepEqual(
    ran.map((answer) => answer.id),
    answers.slice(0, ran.length).map((answer) => answer.id),
    'the calls run in order: the first ones ran, the rest did not',
  );
  t.is(notRun[0]!.error!.code, -32000);
  // One upstream call per call that ran, each started within the budget (the slack is the way from the gate to the upstream on a loaded machine).
  t.is(arrivals.length, ran.length);
  for (const arrival of arrivals)
    t.true(arrival - sentAt < TIME_BUDGET_MS + 300, `a call reached the upstream ${Math.round(arrival - sentAt)} ms after the batch was sent`);
  // One at a time: each call reached the upstream after the one before had its answer.
  for (let index = 1; index < arrivals.length; index++) t.true(arrivals[index]! - arrivals[index - 1]! >= UPSTREAM_MS - 5);
});
