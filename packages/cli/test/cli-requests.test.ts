import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { signInAgent } from '@svc/testing/identity';
import { runCli } from './helpers/run-cli.ts';

/** `svc request feature|mirror|source|status|moderate` and `svc radar` as a process. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on', SVC_OAUTH_TOKEN_RATE_PER_MINUTE: '100000' } });
});
test.after.always(async () => {
  await svc?.close();
});

const envFor = (token: string) => ({ SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: token });

test('file, replay, list and read requests; the operator moderates; --json everywhere', async (t) => {
  const { session } = await signInAgent(svc);
  const env = envFor(session.accessToken);
  const feature = ['request', 'feature', '--capability', 'a reranker for German legal text', '--task', 'rerank', '--use-case', 'legal search'];
  const filed = await runCli([...feature, '--json'], { env });
  t.is(filed.code, 0, filed.stderr);
  const receipt = JSON.parse(filed.stdout) as { request_id: string; replayed: boolean; status: string };
  t.regex(receipt.request_id, /^brr_/);
  t.false(receipt.replayed);
  const again = await runCli(feature, { env });
  t.is(again.code, 0, again.stderr);
  t.is(again.stdout.trim(), `Already filed ${receipt.request_id} (feature, submitted); nothing new was created.`);

  const mirror = await runCli(['request', 'mirror', '--artifact', 'all-minilm-l6-v2', '--use-case', 'offline', '--target-tool', 'onnxruntime'], { env });
  t.is(mirror.code, 0, mirror.stderr);
  t.regex(mirror.stdout, /^Filed brr_\S+ \(mirror, submitted\)/);
  const source = await runCli(
    ['request', 'source', '--repo', 'BAAI/bge-m3', '--source', 'huggingface', '--use-case', 'hybrid search', '--target-tool', 'vllm', '--json'],
    { env },
  );
  t.is(source.code, 0, source.stderr);
  const sourceId = (JSON.parse(source.stdout) as { request_id: string }).request_id;

  const list = await runCli(['request', 'status'], { env });
  t.is(list.code, 0, list.stderr);
  t.regex(list.stdout, /^ID\s+KIND\s+STATUS\s+CREATED\s+WHAT/);
  t.regex(list.stdout, /huggingface:BAAI\/bge-m3/);
  t.regex(list.stdout, /all-minilm-l6-v2/);
  const listJson = JSON.parse((await runCli(['request', 'status', '--kind', 'feature', '--json'], { env })).stdout) as { data: Array<{ request_id: string }> };
  t.deepEqual(
    listJson.data.map((entry) => entry.request_id),
    [receipt.request_id],
  );

  const moderated = await runCli(['request', 'moderate', sourceId, '--status', 'accepted', '--note', 'will add it', '--json'], {
    env: envFor(svc.operatorToken),
  });
  t.is(moderated.code, 0, moderated.stderr);
  t.is((JSON.parse(moderated.stdout) as { status: string }).status, 'accepted');
  const shown = await runCli(['request', 'status', sourceId], { env });
  t.is(shown.code, 0, shown.stderr);
  t.regex(shown.stdout, new RegExp(`^${sourceId}  source  accepted`));
  t.regex(shown.stdout, /note: will add it/);
  t.regex(shown.stdout, /submitted -> accepted {2}by operator: will add it/);

  const all = await runCli(['request', 'status', '--all', '--json'], { env: envFor(svc.operatorToken) });
  t.is(all.code, 0, all.stderr);
  t.true((JSON.parse(all.stdout) as { data: unknown[] }).data.length >= 3);
});

test('refusals: exit 1 with the stable code (JSON on stderr with --json); usage errors exit 2', async (t) => {
  const { session } = await signInAgent(svc);
  const env = envFor(session.accessToken);
  const notMine = await runCli(['request', 'status', 'brr_0000000000000000000000', '--json'], { env });
  t.is(notMine.code, 1);
  t.like(JSON.parse(notMine.stderr), { code: 'request_not_found', status: 404 });
  const allDenied = await runCli(['request', 'status', '--all'], { env });
  t.is(allDenied.code, 1);
  t.regex(allDenied.stderr, /everyone_view_not_allowed/);
  const filed = JSON.parse((await runCli(['request', 'feature', '--capability', 'c', '--task', 't', '--use-case', 'u', '--json'], { env })).stdout) as {
    request_id: string;
  };
  const notOperator = await runCli(['request', 'moderate', filed.request_id, '--status', 'rejected'], { env });
  t.is(notOperator.code, 1);
  t.regex(notOperator.stderr, /principal_not_allowed/);
  const operator = envFor(svc.operatorToken);
  t.is((await runCli(['request', 'moderate', filed.request_id, '--status', 'fulfilled'], { env: operator })).code, 0);
  const final = await runCli(['request', 'moderate', filed.request_id, '--status', 'under_review', '--json'], { env: operator });
  t.is(final.code, 1);
  t.like(JSON.parse(final.stderr), { code: 'request_transition_refused', status: 409 });
  const secret = await runCli(['request', 'feature', '--capability', 'c', '--task', 't', '--use-case', 'token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB'], {
    env,
  });
  t.is(secret.code, 1);
  t.regex(secret.stderr, /request_credential_refused/);
  t.is((await runCli(['request', 'moderate', filed.request_id, '--status', 'submitted'], { env: operator })).code, 2);
  t.is((await runCli(['request', 'source', '--repo', 'a/b', '--use-case', 'u', '--target-tool', 't'], { env })).code, 2, '--source is required');
  t.is((await runCli(['radar', '--limit', 'ten'], { env })).code, 2);
});

test('--everyone is the operator view, derived from the contract; --all there is its deprecated old name, with a notice', async (t) => {
  const { session } = await signInAgent(svc);
  const filed = await runCli(['request', 'feature', '--capability', 'an everyone view', '--task', 'rerank', '--use-case', 'u', '--json'], {
    env: envFor(session.accessToken),
  });
  const id = (JSON.parse(filed.stdout) as { request_id: string }).request_id;
  const operator = envFor(svc.operatorToken);
  const ids = (output: string) => (JSON.parse(output) as { data: { request_id: string }[] }).data.map((entry) => entry.request_id);
  const everyone = await runCli(['request', 'status', '--everyone', '--limit', '100', '--json'], { env: operator });
  t.is(everyone.code, 0, everyone.stderr);
  t.true(ids(everyone.stdout).includes(id));
  t.is(everyone.stderr, '');
  // Without it the operator's list is its own rows.
  t.false(ids((await runCli(['request', 'status', '--limit', '100', '--json'], { env: operator })).stdout).includes(id));
  const old = await runCli(['request', 'status', '--all', '--limit', '100', '--json'], { env: operator });
  t.is(old.code, 0, old.stderr);
  t.true(ids(old.stdout).includes(id));
  t.regex(old.stderr, /--all is the old name of --everyone/);
  const help = await runCli(['request', 'status', '--help'], { env: operator });
  t.regex(help.stdout, /--everyone +every principal's requests, not only yours \(the operator/);
  t.notRegex(help.stdout, /--all/);
});

test('svc radar: most requested first, by distinct requesters', async (t) => {
  const agents = await Promise.all(Array.from({ length: 3 }, () => signInAgent(svc)));
  await Promise.all(
    agents.map(({ session }, index) =>
      runCli(['request', 'source', '--repo', 'org/radar-top', '--source', 'github', '--use-case', `reason ${index}`, '--target-tool', 'vllm'], {
        env: envFor(session.accessToken),
      }),
    ),
  );
  await runCli(['request', 'source', '--repo', 'org/radar-second', '--source', 'github', '--use-case', 'u', '--target-tool', 'vllm'], {
    env: envFor(agents[0]!.session.accessToken),
  });
  const radar = await runCli(['radar'], { env: envFor(agents[1]!.session.accessToken) });
  t.is(radar.code, 0, radar.stderr);
  t.regex(radar.stdout, /^RANK\s+REQUESTERS\s+KIND\s+WHAT\s+STATUS\s+IN CATALOG/);
  t.regex(radar.stdout, /\n1\s+3\s+source\s+github:org\/radar-top\s+submitted\s+no/);
  const json = JSON.parse((await runCli(['radar', '--limit', '1', '--json'], { env: envFor(agents[1]!.session.accessToken) })).stdout) as {
    data: Array<{ repo: string; requesters: number }>;
  };
  t.deepEqual(
    json.data.map((entry) => [entry.repo, entry.requesters]),
    [['org/radar-top', 3]],
  );
});
