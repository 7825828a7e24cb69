import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig } from '../src/index.ts';
import { RETRY_AFTER_MAX_MS, retryAfterMs } from '../src/inference/openai-compatible/retry-after.ts';

let directory: string;
test.before(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'svc-deployments-'));
});
test.after.always(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function issuesFor(content: unknown, env: Record<string, string> = {}): Promise<string[]> {
  const file = path.join(directory, `${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(content));
  try {
    loadConfig({ SVC_MODELS_FILE: file, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

const upstreams = [
  { id: 'east', base_url: 'http://127.0.0.1:9/v1' },
  { id: 'west', base_url: 'http://127.0.0.1:10/v1' },
];

test('a model lists deployments: weights, upstream model names and in-flight maxima are read, one upstream is one deployment', (t) => {
  const file = path.join(directory, 'good.json');
  return writeFile(
    file,
    JSON.stringify({
      upstreams,
      models: [
        {
          id: 'gpt',
          upstream_model: 'gpt-4o',
          balancing: 'least_in_flight',
          deployments: [
            { upstream: 'east', weight: 3, max_in_flight: 1 },
            { upstream: 'west', upstream_model: 'gpt-4o-2024' },
          ],
        },
        { id: 'one', upstream: 'east' },
      ],
    }),
  ).then(() => {
    const config = loadConfig({ SVC_MODELS_FILE: file, SVC_UPSTREAM_COOLDOWN_MS: '1000', SVC_UPSTREAM_COOLDOWN_MAX_MS: '500' });
    const [gpt, one] = config.inference.models;
    t.is(gpt!.balancing, 'least_in_flight');
    t.deepEqual(gpt!.deployments, [
      { upstream: 'east', upstreamModel: 'gpt-4o', weight: 3, maxInFlight: 1 },
      { upstream: 'west', upstreamModel: 'gpt-4o-2024', weight: 1, maxInFlight: undefined },
    ]);
    t.is(gpt!.upstream, 'east', 'the first deployment names the engine /v1/models shows');
    t.deepEqual(one!.deployments, [{ upstream: 'east', upstreamModel: 'one', weight: 1, maxInFlight: undefined }]);
    t.is(one!.balancing, 'weighted');
    t.is(config.inference.routing.cooldownMaxMs, 1000, 'a cap below the first cooldown is raised to it');
  });
});

test('SVC_UPSTREAM_* is one deployment of each model it lists', (t) => {
  const config = loadConfig({ SVC_UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1', SVC_UPSTREAM_MODELS: 'm1,m2' });
  t.deepEqual(
    config.inference.models.map((model) => model.deployments),
    [
      [{ upstream: 'upstream', upstreamModel: 'm1', weight: 1, maxInFlight: undefined }],
      [{ upstream: 'upstream', upstreamModel: 'm2', weight: 1, maxInFlight: undefined }],
    ],
  );
});

test('misconfigured deployments stop the start, each issue naming its entry', async (t) => {
  const issues = await issuesFor({
    upstreams,
    models: [
      { id: 'both', upstream: 'east', deployments: [{ upstream: 'west' }] },
      { id: 'neither' },
      { id: 'unknown', deployments: [{ upstream: 'east' }, { upstream: 'north' }] },
      { id: 'twice', deployments: [{ upstream: 'east' }, { upstream: 'east' }] },
    ],
  });
  t.true(issues.includes('models[0]: give "upstream" (one) or "deployments" (several), exactly one of the two'), issues.join('\n'));
  t.true(issues.includes('models[1]: give "upstream" (one) or "deployments" (several), exactly one of the two'));
  t.true(issues.some((issue) => issue.startsWith('models[2].deployments[1].upstream: unknown upstream "north" (known: east, west')));
  t.true(issues.includes('models[3].deployments[1]: upstream "east" with model "twice" is listed twice'));
});

test('deployment limits at their edges: weight 1 to 1000, max_in_flight from 1, at most 16 deployments, a known balancing', async (t) => {
  const model = (deployments: unknown[], extra = {}) => ({ upstreams, models: [{ id: 'm', deployments, ...extra }] });
  const many = (count: number) => Array.from({ length: count }, (_, index) => ({ upstream: 'east', upstream_model: `m${index}` }));
  t.deepEqual(
    await issuesFor(
      model([
        { upstream: 'east', weight: 1000, max_in_flight: 1 },
        { upstream: 'west', weight: 1 },
      ]),
    ),
    [],
  );
  t.deepEqual(await issuesFor(model(many(16))), []);
  t.true((await issuesFor(model([{ upstream: 'east', weight: 1001 }]))).some((issue) => issue.startsWith('models[0].deployments[0].weight:')));
  t.true((await issuesFor(model([{ upstream: 'east', weight: 0 }]))).some((issue) => issue.startsWith('models[0].deployments[0].weight:')));
  t.true((await issuesFor(model([{ upstream: 'east', max_in_flight: 0 }]))).some((issue) => issue.startsWith('models[0].deployments[0].max_in_flight:')));
  t.true((await issuesFor(model(many(17)))).some((issue) => issue.startsWith('models[0].deployments:')));
  t.true((await issuesFor(model([]))).some((issue) => issue.startsWith('models[0].deployments:')));
  t.true((await issuesFor(model([{ upstream: 'east' }], { balancing: 'round_robin' }))).some((issue) => issue.startsWith('models[0].balancing:')));
  t.true((await issuesFor(model([{ upstream: 'east', base_url: 'http://x' }]))).some((issue) => issue.startsWith('models[0].deployments[0]')));
});

test("an upstream's wait is read from retry-after-ms, Retry-After seconds or an HTTP date, capped at an hour", (t) => {
  const now = Date.parse('2026-11-27T03:00:00Z');
  t.is(retryAfterMs('ms:1500', now), 1500);
  t.is(retryAfterMs('3', now), 3000);
  t.is(retryAfterMs('0.5', now), 500);
  t.is(retryAfterMs('Fri, 27 Nov 2026 03:00:10 GMT', now), 10_000);
  t.is(retryAfterMs('Fri, 27 Nov 2026 02:59:00 GMT', now), 0, 'a date in the past: no wait');
  t.is(retryAfterMs(String(RETRY_AFTER_MAX_MS / 1000), now), RETRY_AFTER_MAX_MS, 'an hour passes');
  t.is(retryAfterMs(String(RETRY_AFTER_MAX_MS / 1000 + 1), now), RETRY_AFTER_MAX_MS, 'past an hour: an hour');
  t.is(retryAfterMs('soon', now), undefined);
  t.is(retryAfterMs(undefined, now), undefined);
});
