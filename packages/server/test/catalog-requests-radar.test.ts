import test from 'ava';
import type { OpenSourceRadarEntry } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { signInAgent } from '@svc/testing/identity';

/**
 * The open-source radar: distinct requesters per source or mirror, exact under concurrent
 * filing; rejected and fulfilled requests leave it; a duplicate counts under its original.
 * Serial: every test reads the one radar of this file's database.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_OAUTH_TOKEN_RATE_PER_MINUTE: '100000', SVC_CATALOG_DEMO: 'on' } });
});
test.after.always(async () => {
  await svc?.close();
});

/** A source request on the api surface under an unrecognised bearer: one more distinct (hashed) requester. */
const apiSourceRequest = (bearer: string, repo: string, useCase: string) =>
  fetch(`${svc.apiUrl}/api/source-requests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ repo, source: 'github', useCase, targetTool: 'vllm' }),
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as { id: string } }));

const entryFor = (data: OpenSourceRadarEntry[], repo: string) => data.find((entry) => entry.repo?.toLowerCase() === repo.toLowerCase());

test.serial('concurrent filing by many requesters, some twice and some replaying: the radar counts each requester once', async (t) => {
  const agents = await Promise.all(Array.from({ length: 8 }, () => signInAgent(svc)));
  const body = (useCase: string) => ({ repo: 'Org/Popular-Model', source: 'github' as const, use_case: useCase, target_tool: 'vllm' });
  const filings = await Promise.all([
    // Eight agents ask, each also sends an exact replay and a second, differently worded request.
    ...agents.flatMap(({ client }, index) => [
      client.requests.source({ body: body(`serve it, agent ${index}`) }),
      client.requests.source({ body: body(`serve it, agent ${index}`) }),
      client.requests.source({ body: { ...body(`and quantised, agent ${index}`), repo: 'org/popular-model' } }),
    ]),
    // Eight anonymous callers of the api surface, told apart by their bearer hashes, each twice.
    ...Array.from({ length: 8 }, (_, index) => apiSourceRequest(`anonymous-${index}`, 'org/popular-model', 'please')),
    ...Array.from({ length: 8 }, (_, index) => apiSourceRequest(`anonymous-${index}`, 'ORG/popular-model', 'please')),
    // A smaller crowd on another repository.
    ...agents
      .slice(0, 3)
      .map(({ client }) => client.requests.source({ body: { repo: 'org/niche', source: 'github', use_case: 'niche', target_tool: 'vllm' } })),
  ]);
  t.is(filings.length, 8 * 3 + 16 + 3);
  const radar = await svc.client({ token: agents[0]!.session.accessToken }).requests.radar();
  const popular = entryFor(radar.data, 'org/popular-model');
  t.truthy(popular);
  t.is(popular!.requesters, 16);
  t.is(popular!.requests, 8 * 2 + 8, 'replays create nothing');
  t.is(popular!.kind, 'source');
  t.false(popular!.in_catalog);
  t.is(popular!.latest_status, 'submitted');
  t.is(popular!.rank, 1);
  const niche = entryFor(radar.data, 'org/niche');
  t.is(niche!.requesters, 3);
  t.is(niche!.rank, 2);
});

test.serial('a mirror of a listed artifact (by id or by its repository) is one subject; catalog holdings are shown', async (t) => {
  const [a, b] = await Promise.all([signInAgent(svc), signInAgent(svc)]);
  await a.client.requests.mirror({ body: { artifact_id: 'all-minilm-l6-v2', use_case: 'offline', target_tool: 'onnxruntime' } });
  const byRepo = await b.client.requests.mirror({
    body: { repo: 'sentence-transformers/all-MiniLM-L6-v2', source: 'huggingface', use_case: 'offline', target_tool: 'onnxruntime' },
  });
  t.is(byRepo.artifact_id, 'all-minilm-l6-v2', 'the repository resolves to the listed artifact');
  await a.client.requests.source({ body: { repo: 'svc-demo/tiny-sentiment-lexicon', source: 'github', use_case: 'already there?', target_tool: 'svc' } });
  const radar = await a.client.requests.radar({ query: { limit: 25 } });
  const mirror = radar.data.find((entry) => entry.kind === 'mirror' && entry.artifact_id === 'all-minilm-l6-v2');
  t.like(mirror, { requesters: 2, requests: 2, in_catalog: true, hosted: false, repo: 'sentence-transformers/all-MiniLM-L6-v2', source: 'huggingface' });
  const listed = radar.data.find((entry) => entry.kind === 'source' && entry.artifact_id === 'tiny-sentiment-lexicon');
  t.like(listed, { requesters: 1, in_catalog: true, hosted: true });
  // Feature requests never appear.
  await a.client.requests.feature({ body: { capability: 'x', task: 'rerank', use_case: 'y' } });
  t.false((await a.client.requests.radar({ query: { limit: 25 } })).data.some((entry) => entry.kind !== 'mirror' && entry.kind !== 'source'));
});

test.serial('rejected and fulfilled requests leave the radar; a duplicate counts under its original and leaves with it', async (t) => {
  const agents = await Promise.all(Array.from({ length: 3 }, () => signInAgent(svc)));
  const file = (index: number, repo: string) =>
    agents[index]!.client.requests.source({ body: { repo, source: 'github', use_case: 'want', target_tool: 'vllm' } });
  const original = await file(0, 'org/settle-me');
  const second = await file(1, 'org/settle-me');
  const elsewhere = await file(2, 'org/same-thing-other-name');
  const radar = () => svc.operator.requests.radar({ query: { limit: 25 } });
  t.is(entryFor((await radar()).data, 'org/settle-me')!.requesters, 2);

  await svc.operator.requests.moderate({ params: { request_id: elsewhere.request_id }, body: { status: 'duplicate', duplicate_of: original.request_id } });
  let data = (await radar()).data;
  t.is(entryFor(data, 'org/settle-me')!.requesters, 3, "the duplicate's requester counts under the original");
  t.falsy(entryFor(data, 'org/same-thing-other-name'));

  await svc.operator.requests.moderate({ params: { request_id: second.request_id }, body: { status: 'rejected' } });
  data = (await radar()).data;
  t.is(entryFor(data, 'org/settle-me')!.requesters, 2);

  await svc.operator.requests.moderate({ params: { request_id: original.request_id }, body: { status: 'accepted' } });
  t.is(entryFor((await radar()).data, 'org/settle-me')!.latest_status, 'accepted', 'the latest request is the duplicate, which follows its original');
  await svc.operator.requests.moderate({ params: { request_id: original.request_id }, body: { status: 'fulfilled', note: 'listed' } });
  data = (await radar()).data;
  t.falsy(entryFor(data, 'org/settle-me'), 'fulfilling the original settles its duplicate too');
  t.falsy(entryFor(data, 'org/same-thing-other-name'));
});

test.serial('limit is 1..25, default 10; ties go to the most recently requested', async (t) => {
  const { client } = await signInAgent(svc);
  for (let index = 0; index < 12; index++)
    await client.requests.source({ body: { repo: `org/filler-${index}`, source: 'github', use_case: 'fill', target_tool: 'vllm' } });
  const all = await client.requests.radar({ query: { limit: 25 } });
  t.true(all.data.length > 12);
  t.is((await client.requests.radar()).data.length, 10);
  t.is((await client.requests.radar({ query: { limit: 1 } })).data.length, 1);
  for (const limit of [0, 26]) {
    const error = await t.throwsAsync(client.requests.radar({ query: { limit } }));
    t.is((error as { status?: number }).status, 422);
  }
  const fillers = all.data.filter((entry) => entry.repo?.startsWith('org/filler-'));
  t.deepEqual(
    fillers.map((entry) => entry.repo),
    Array.from({ length: 12 }, (_, index) => `org/filler-${11 - index}`).slice(0, fillers.length),
  );
  t.deepEqual(
    all.data.map((entry) => entry.rank),
    all.data.map((_, index) => index + 1),
  );
});
