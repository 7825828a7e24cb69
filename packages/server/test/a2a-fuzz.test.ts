import test from 'ava';
import fc from 'fast-check';
import { z } from 'zod';
import { a2aSkills } from '@svc/schemas';
import { createKey, signInAgent } from '@svc/testing/identity';
import { invalidVariants, validValue, type JsonSchema } from '@svc/testing/schema-arbitrary';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * Each skill against its REST twin, with inputs generated from the route's own JSON Schema by
 * fast-check (valid ones, and variants the schema certainly refuses): the A2A task completes
 * exactly when REST answers 200, with the REST answer as its data, and fails with the REST
 * status and error code otherwise; what the A2A edge itself refuses, REST refuses with the same
 * code. Never a 5xx on either side. SVC_FUZZ_SEED replays a run; SVC_A2A_FUZZ_RUNS sets its size.
 */
const RUNS = Number(process.env.SVC_A2A_FUZZ_RUNS ?? 40);
const SEED = process.env.SVC_FUZZ_SEED === undefined ? Date.now() ^ (Math.random() * 0x7fffffff) : Number(process.env.SVC_FUZZ_SEED);
let svc: TestServer;
/** One caller per skill: the skills' tests run at once, each its own tasks. */
const keys = new Map<string, string>();
/** Text no JSON body may carry: the A2A edge refuses it as REST's JSON edge does; a query string replaces it with U+FFFD. */
const UNSTORABLE = new Set(['json_lone_surrogate', 'json_nul_character']);

test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  for (const skill of a2aSkills) {
    const agent = await signInAgent(svc);
    keys.set(skill.id, (await createKey(agent.client, ['inference:invoke'])).secret);
  }
});
test.after.always(async () => {
  await svc?.close();
});

function withoutTimings(answer: any) {
  if (!answer || typeof answer !== 'object') return answer;
  const { svc: servedBy, request_id: _requestId, ...rest } = answer;
  return servedBy ? { ...rest, svc: { ...servedBy, latency_ms: undefined, timings: undefined } } : rest;
}

async function rest(skill: (typeof a2aSkills)[number], input: unknown) {
  const route = skill.route;
  const key = keys.get(skill.id)!;
  const root = route.surface === 'api' ? svc.apiUrl : svc.baseUrl;
  const query =
    skill.inputIn === 'query'
      ? `?${new URLSearchParams(Object.entries(input as Record<string, unknown>).flatMap(([name, value]) => (value === undefined || value === null || value === '' ? [] : [[name, String(value)]])))}`
      : '';
  const response = await fetch(`${root}${route.path}${query}`, {
    method: route.method,
    headers: { authorization: `Bearer ${key}`, ...(skill.inputIn === 'body' ? { 'content-type': 'application/json' } : {}) },
    body: skill.inputIn === 'body' ? JSON.stringify(input) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

async function a2a(skillId: string, input: unknown, legacy: boolean) {
  const key = keys.get(skillId)!;
  const message = legacy
    ? { messageId: 'fuzz', role: 'user', parts: [{ kind: 'data', data: input }], metadata: { skill: skillId } }
    : { messageId: 'fuzz', role: 'ROLE_USER', parts: [{ data: input }], metadata: { skill: skillId } };
  const response = await fetch(`${svc.baseUrl}/a2a`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'fuzz', method: legacy ? 'message/send' : 'SendMessage', params: { message } }),
  });
  const body = (await response.json()) as any;
  return { status: response.status, body, task: legacy ? body.result : body.result?.task };
}

const COMPLETED = new Set(['completed', 'TASK_STATE_COMPLETED']);
const FAILED = new Set(['failed', 'TASK_STATE_FAILED']);
const fileless = a2aSkills.filter((skill) => !('takesFile' in skill));

for (const skill of fileless) {
  test(`${skill.id}: A2A answers what ${skill.route.method} ${skill.route.path} answers, for generated inputs`, async (t) => {
    const part = skill.inputIn === 'query' ? skill.route.query : skill.route.body;
    const schema = z.toJSONSchema(part as z.ZodType, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    const inputs = validValue(schema, schema).chain((valid) => {
      const variants = invalidVariants(schema, schema, valid).map((variant) => variant.value);
      return variants.length ? fc.oneof(fc.constant(valid), fc.constantFrom(...variants)) : fc.constant(valid);
    });
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(inputs, fc.boolean(), async (generated, legacy) => {
        // `stream` is REST's choice of an event stream; A2A streams with message/stream, so the skill reads it as absent.
        const input = generated !== null && typeof generated === 'object' && !Array.isArray(generated) ? { ...generated, stream: undefined } : generated;
        const isObject = input !== null && typeof input === 'object' && !Array.isArray(input);
        const [expected, answer] = await Promise.all([
          isObject || skill.inputIn === 'body' ? rest(skill, input) : { status: 422, body: {} },
          a2a(skill.id, input, legacy),
        ]);
        const label = `${JSON.stringify(input).slice(0, 300)} (${legacy ? '0.3' : '1.0'}): REST ${expected.status} ${JSON.stringify(expected.body).slice(0, 200)}; A2A ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`;
        const fail = (why: string) => {
          t.log(`${why}: ${label}`);
          throw new Error(`${why}: ${label}`);
        };
        if (expected.status >= 500 || answer.status >= 500) fail('a 5xx');
        if (!isObject) {
          // A data part holds an object: anything else is refused by the A2A params (-32602), as a REST body refuses it (422); a query has no such form.
          // Text no body may carry is refused before the params are read (the edge's check), under its own code.
          const refusedAtEdge = UNSTORABLE.has(answer.body.error?.data?.code);
          if ((answer.body.error?.code !== -32602 && !refusedAtEdge) || expected.status !== 422) fail('not an object');
          return;
        }
        if (answer.body.error) {
          if (UNSTORABLE.has(answer.body.error.data.code) && (expected.status === 422 || skill.inputIn === 'query')) return;
          if (answer.body.error.data.code !== expected.body.code) fail('the A2A edge refused with another code');
          return;
        }
        compared++;
        const state = answer.task.status.state as string;
        if (expected.status === 200) {
          if (!COMPLETED.has(state)) fail(`REST 200 but the task is ${state}`);
          const data = answer.task.artifacts[0].parts.find((one: any) => one.data !== undefined).data;
          t.deepEqual(withoutTimings(data), withoutTimings(expected.body), label);
        } else {
          if (!FAILED.has(state)) fail(`REST ${expected.status} but the task is ${state}`);
          const error = answer.task.status.message.parts.find((one: any) => one.data !== undefined).data;
          if (error.status !== expected.status || error.body.code !== expected.body.code) fail('another error');
        }
      }),
      { numRuns: RUNS, seed: SEED, verbose: 1 },
    );
    t.log(`seed ${SEED}: ${RUNS} inputs, ${compared} compared task by task`);
    t.true(compared > 0);
  });
}
