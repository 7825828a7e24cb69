/**
 * The start bundle (src/start-bundle.ts): run only while every source it was built from is
 * unchanged, and, built, a server that starts, answers, and runs its worker modules from it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { fileStamp, freshStartBundle, START_BUNDLE_ENTRY, START_BUNDLE_MANIFEST, type StartBundleManifest } from '../src/start-bundle.ts';

const packageDirectory = fileURLToPath(new URL('..', import.meta.url));

/** A bundle directory with one build and two recorded sources beside it. */
function fakeBundle(): { directory: string; sources: string[] } {
  const root = mkdtempSync(path.join(tmpdir(), 'svc-start-bundle-'));
  const directory = path.join(root, 'bundle');
  mkdirSync(path.join(directory, 'build-a'), { recursive: true });
  const sources = ['one.ts', 'two.ts'].map((name) => path.join(root, name));
  for (const source of sources) writeFileSync(source, `export const name = '${source}';\n`);
  const manifest: StartBundleManifest = {
    build: 'build-a',
    inputs: Object.fromEntries(sources.map((source) => [path.relative(directory, source), fileStamp(source)!])),
  };
  writeFileSync(path.join(directory, START_BUNDLE_MANIFEST), JSON.stringify(manifest));
  return { directory, sources };
}

test('a bundle whose sources are unchanged is run, from the build its manifest names', (t) => {
  const { directory } = fakeBundle();
  t.is(freshStartBundle(directory)?.pathname, path.join(directory, 'build-a', START_BUNDLE_ENTRY));
});

test('a source edited since the build (time or size), removed, or a manifest missing or unreadable: the sources run', (t) => {
  const touched = fakeBundle();
  const later = new Date(Date.now() + 60_000);
  utimesSync(touched.sources[1]!, later, later);
  t.is(freshStartBundle(touched.directory), undefined, 'modification time');

  const resized = fakeBundle();
  const stamp = fileStamp(resized.sources[0]!)!;
  writeFileSync(resized.sources[0]!, 'export const name = 1;\n');
  utimesSync(resized.sources[0]!, new Date(stamp[0]), new Date(stamp[0]));
  t.is(freshStartBundle(resized.directory), undefined, 'size with the same time');

  const removed = fakeBundle();
  rmSync(removed.sources[0]!);
  t.is(freshStartBundle(removed.directory), undefined, 'removed');

  const unbuilt = fakeBundle();
  rmSync(path.join(unbuilt.directory, START_BUNDLE_MANIFEST));
  t.is(freshStartBundle(unbuilt.directory), undefined, 'no manifest');

  const garbled = fakeBundle();
  writeFileSync(path.join(garbled.directory, START_BUNDLE_MANIFEST), '{"build":');
  t.is(freshStartBundle(garbled.directory), undefined, 'unreadable manifest');
});

/** Runs `command` to its end from the repository's root, as the root's postinstall does; answers its exit code and output. */
function run(command: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, command, { cwd: path.join(packageDirectory, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('built, the bundle starts the server from its own files: /healthz, and the discovery documents from its worker module', async (t) => {
  // Under packages/server, as the real one is, so that the packages left external resolve.
  const directory = path.join(packageDirectory, 'node_modules', '.cache', `svc-start-test-${process.pid}`);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'svc-start-bundle-data-'));
  t.teardown(() => {
    rmSync(directory, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });
  const built = await run(['packages/server/scripts/build-start-bundle.ts', directory]);
  t.is(built.code, 0, built.output);
  t.regex(built.output, /start bundle written/, built.output);
  const manifest = JSON.parse(readFileSync(path.join(directory, START_BUNDLE_MANIFEST), 'utf8')) as StartBundleManifest;
  t.true(Object.keys(manifest.inputs).some((input) => input.endsWith(path.join('src', 'cli.ts'))));
  t.true(Object.keys(manifest.inputs).some((input) => input.endsWith('pnpm-lock.yaml')));

  const entry = path.join(directory, manifest.build, START_BUNDLE_ENTRY);
  const env = { ...process.env, SVC_DATA_DIR: dataDir, SVC_HOST: '127.0.0.1', SVC_PORT: '0', SVC_LOG_LEVEL: 'info', DATABASE_URL: '' };
  const server = spawn(process.execPath, [entry, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => server.kill('SIGKILL'));
  let output = '';
  server.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const line = output.split('\n').find((candidate) => candidate.includes('"msg":"svc listening"'));
      if (line) resolve((JSON.parse(line) as { baseUrl: string }).baseUrl);
    });
    server.once('exit', (code) => reject(new Error(`the bundled server exited (${code}) before listening:\n${output}`)));
  });
  t.is((await fetch(`${baseUrl}/healthz`)).status, 200);
  const openapi = await fetch(`${baseUrl}/openapi.json`);
  t.is(openapi.status, 200);
  t.truthy(((await openapi.json()) as { paths: Record<string, unknown> }).paths['/healthz']);
  const llms = await fetch(`${baseUrl}/llms.txt`);
  t.is(llms.status, 200);
  t.true((await llms.text()).includes(`${baseUrl}/a2a`));
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.kill('SIGTERM');
  t.is(await exited, 0, output);
  t.notRegex(output, /DeprecationWarning|ERR_/, 'the bundle warns no more than the sources');
});
