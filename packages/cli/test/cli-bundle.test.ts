import { execFile } from 'node:child_process';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { buildInstalledBin } from '../scripts/bin-build.ts';

/**
 * The published bin (dist/bin.js, what `npm i @svc/cli` runs) is one bundle: a bare `svc board get`
 * loads its own files and commander, not the client's, the contract's or zod's hundreds of modules
 * (each a file to resolve, read and link: about 0.2 s of its start, issue 44), and of zod's 60+
 * locales it carries English alone. Built here from the sources as `pnpm build` builds it, into a
 * folder laid out as an install; a preloaded hook lists every module the process resolves.
 */
const HOOK = `data:text/javascript,${encodeURIComponent(
  "import { registerHooks } from 'node:module'; const seen = new Set(); registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context); seen.add(resolved.url); return resolved; } }); process.on('exit', () => process.stderr.write('MODULES ' + JSON.stringify([...seen]) + '\\n'));",
)}`;

let dir: string;
let bin: string;
test.before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'svc-cli-bundle-'));
  bin = await buildInstalledBin(dir);
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function modulesLoadedBy(args: string[]): Promise<{ code: number; stdout: string; stderr: string; modules: string[] }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const result = await promisify(execFile)(process.execPath, ['--import', HOOK, bin, ...args], { env, timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
  const line = result.stderr.split('\n').find((text) => text.startsWith('MODULES '));
  return { ...result, modules: JSON.parse(line!.slice('MODULES '.length)) as string[] };
}

test('a bare svc board get from the published bin loads its bundle and commander, no module of the client, the contract, zod or ky', async (t) => {
  // Port 9 (discard) refuses: the request fails after every module the command needs has loaded.
  const { code, stderr, modules } = await modulesLoadedBy(['board', 'get', 'demo:x', '--base-url', 'http://127.0.0.1:9']);
  t.is(code, 1, stderr);
  t.regex(stderr, /Cannot reach http:\/\/127\.0\.0\.1:9\//, 'it got as far as its request');
  const files = modules.filter((url) => url.startsWith('file:'));
  const distUrl = pathToFileURL(path.dirname(bin)).href;
  t.true(files.length > 3, files.join(' '));
  t.deepEqual(
    files.filter((url) => !url.startsWith(`${distUrl}/`) && !/\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?commander\//.test(url)),
    [],
    'only the bundle and commander',
  );

  // Of zod's locales, the bundle it loaded carries English alone (each locale is a `localeError: error()` factory).
  const loaded = await Promise.all(files.filter((url) => url.startsWith(distUrl)).map((url) => readFile(fileURLToPath(url), 'utf8')));
  const locales = loaded.join('\n').match(/localeError: error\d*\(\)/g) ?? [];
  t.is(locales.length, 1, `${locales.length} zod locales in the files svc board get loaded`);
  t.true(
    loaded.some((text) => text.includes('Invalid input: expected')),
    "zod's English messages are in",
  );
});

test('the published bin answers as the workspace svc does: --version, --help and a usage error', async (t) => {
  const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  const printed = await modulesLoadedBy(['--version']);
  t.is(printed.stdout, `${version}\n`);
  const distUrl = pathToFileURL(path.dirname(bin)).href;
  const files = printed.modules.filter((url) => url.startsWith('file:'));
  t.deepEqual(
    files.filter((url) => !url.startsWith(`${distUrl}/`) || /\/program-\w+\.js$/.test(url)),
    [],
    '--version loads neither commander nor the program',
  );
  const workspace = fileURLToPath(new URL('../bin/svc.js', import.meta.url));
  const [bundled, fromSources] = await Promise.all(
    [bin, workspace].map((file) => promisify(execFile)(process.execPath, [file, '--help'], { timeout: 60_000 }).then(({ stdout }) => stdout)),
  );
  t.is(bundled, fromSources);
  const usage = await modulesLoadedBy(['board', 'get']);
  t.is(usage.code, 2);
  t.regex(usage.stderr, /missing required argument/);
});
