import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { run } from '@svc/testing/run';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const HERE = fileURLToPath(new URL('..', import.meta.url));
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
});
test.after.always(async () => {
  await svc?.close();
});

async function tempDir(t: { teardown(fn: () => Promise<void>): void }) {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-example-download-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('the verified-download example fetches every file of the demo artifact, each matching its plan, and the pull is counted', async (t) => {
  const artifactId = 'prompt-injection-rules';
  const plan = await svc.client().catalog.downloadPlan({ params: { id: artifactId } });
  const before = (await svc.client().catalog.artifact({ params: { id: artifactId } })).downloads;
  const out = path.join(await tempDir(t), 'rules');
  const storageHost = new URL(svc.apiUrl).host;
  const result = await run(process.execPath, [MAIN, artifactId, out, '--storage-host', storageHost, '--allow-http-loopback'], {
    cwd: HERE,
    env: { SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl },
    timeoutMs: 60_000,
  });
  t.is(result.code, 0, result.stderr);
  for (const file of plan.files) {
    const bytes = await readFile(path.join(out, ...file.path.split('/')));
    t.is(createHash('sha256').update(bytes).digest('hex'), file.sha256);
    t.is(bytes.length, file.sizeBytes);
    t.regex(result.stdout, new RegExp(`^verified ${file.path.replace(/\./g, '\\.')} sha256:${file.sha256} ${file.sizeBytes} bytes -> `, 'm'));
  }
  t.regex(result.stdout, new RegExp(`^ok: ${artifactId} revision ${plan.revision}, ${plan.files.length} verified, 0 failed$`, 'm'));
  const after = (await svc.client().catalog.artifact({ params: { id: artifactId } })).downloads;
  t.true(after > before, 'attested completions count as pulls');
});

test('with --strict-storage the local store is not trusted: the example refuses, names the check, exits 1 and writes nothing', async (t) => {
  const out = path.join(await tempDir(t), 'rules');
  const result = await run(process.execPath, [MAIN, 'prompt-injection-rules', out, '--strict-storage'], {
    cwd: HERE,
    env: { SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl },
    timeoutMs: 60_000,
  });
  t.is(result.code, 1);
  t.regex(result.stderr, /^failed \S+ \[storage-host\]: /m);
  t.regex(result.stdout, /^incomplete: prompt-injection-rules revision \S+, 0 verified, \d+ failed$/m);
  const written = await readdir(out).catch(() => []);
  t.deepEqual(written, []);
});

test('with no storage flags a server on this machine has its own store trusted by default', async (t) => {
  const out = path.join(await tempDir(t), 'rules-default');
  const result = await run(process.execPath, [MAIN, 'prompt-injection-rules', out], {
    cwd: HERE,
    env: { SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl },
    timeoutMs: 60_000,
  });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stdout, /^ok: prompt-injection-rules revision \S+, \d+ verified, 0 failed$/m);
});
