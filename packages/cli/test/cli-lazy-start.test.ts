import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import { CLI_BIN } from './helpers/run-cli.ts';

/**
 * `svc --version` answers before the contract loads (issue 44: it took 1.4 s against bare node's
 * 0.2 s), `svc --help` prints from the command manifest without loading any command's module, and
 * `svc board get` loads the blackboard's contract entry and client alone, not every feature's
 * (it took 8.6 s at load 25). A preloaded module hook lists every module the process resolves.
 */
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const HOOK = `data:text/javascript,${encodeURIComponent(
  "import { registerHooks } from 'node:module'; const seen = []; registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context); seen.push(resolved.url); return resolved; } }); process.on('exit', () => process.stderr.write('MODULES ' + JSON.stringify(seen) + '\\n'));",
)}`;

async function modulesLoadedBy(args: string[]): Promise<{ stdout: string; modules: string[] }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', HOOK, CLI_BIN, ...args], { env, timeout: 60_000 });
  const line = stderr.split('\n').find((text) => text.startsWith('MODULES '));
  return { stdout, modules: JSON.parse(line!.slice('MODULES '.length)) as string[] };
}
const contractModules = (modules: string[]) => modules.filter((url) => /\/packages\/(schemas|client)\/|\/node_modules\/zod\//.test(url));

test('svc --version and -v print the CLI version without loading the contract, the client or zod', async (t) => {
  for (const flag of ['--version', '-v']) {
    const { stdout, modules } = await modulesLoadedBy([flag]);
    t.is(stdout, `${version}\n`);
    t.deepEqual(contractModules(modules), [], flag);
  }
});

test('svc --help loads no command module, no contract and no zod, and prints what the whole program prints', async (t) => {
  const { stdout, modules } = await modulesLoadedBy(['--help']);
  t.deepEqual(contractModules(modules), []);
  t.deepEqual(
    modules.filter((url) => url.includes('/packages/cli/src/commands/') && !url.endsWith('/commands/index.ts') && !url.endsWith('/commands/manifest.ts')),
    [],
  );
  // The whole program, every group loaded in this process: the same help, word for word.
  const { buildProgram } = await import('../src/program.ts');
  t.is(stdout, (await buildProgram()).helpInformation());
});

test('svc board get loads the blackboard contract entry and client, and no other feature (the hook sees what a command loads)', async (t) => {
  // Port 9 (discard) refuses: the request fails after every module the command needs has loaded.
  const { modules } = await modulesLoadedBy(['board', 'get', 'demo:x', '--base-url', 'http://127.0.0.1:9']).catch(
    (error: { stdout: string; stderr: string }) => {
      const line = error.stderr.split('\n').find((text) => text.startsWith('MODULES '));
      return { stdout: error.stdout, modules: JSON.parse(line!.slice('MODULES '.length)) as string[] };
    },
  );
  const schemas = modules.filter((url) => url.includes('/packages/schemas/src/')).map((url) => url.replace(/.*\/packages\/schemas\/src\//, ''));
  t.true(schemas.includes('blackboard/contract.ts'), schemas.join(' '));
  t.false(schemas.includes('contract.ts'), 'the whole contract list is not loaded');
  t.false(schemas.includes('index.ts'), 'the root entry is not loaded');
  t.deepEqual(
    schemas.filter((file) => /^(inference|catalog|identity|pdf|billing|jobs|responses|discovery|system|requests)\//.test(file)),
    [],
  );
  t.false(
    modules.some((url) => url.endsWith('/packages/client/src/index.ts')),
    'the client root is not loaded',
  );
  t.deepEqual(
    modules.filter((url) => /\/packages\/cli\/src\/commands\/(?!index|manifest|blackboard)/.test(url)),
    [],
    'no other command module',
  );
});

/** Whether Node loaded its TypeScript stripper (amaro) in a `svc --version` run from `bin`, with `home` as TMPDIR (the compile cache's default directory under it). */
async function loadsTypeScriptStripper(bin: string, home: string): Promise<boolean> {
  const report = "process.on('exit', () => process.stderr.write('AMARO ' + process.moduleLoadList.some((name) => name.includes('amaro')) + '\\n'));";
  const { stderr } = await promisify(execFile)(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(report)}`, bin, '--version'], {
    env: { PATH: process.env.PATH, TMPDIR: home },
    timeout: 60_000,
  });
  return stderr.includes('AMARO true');
}

test("the workspace's svc reads its TypeScript from the compile cache: a warm run never loads Node's TypeScript stripper (every CLI-process test spawns it)", async (t) => {
  const home = await mkdtemp(path.join(tmpdir(), 'svc-cli-launcher-'));
  try {
    t.true(CLI_BIN.endsWith('.js'), CLI_BIN);
    // The first run fills the cache (it strips the .ts files once); every run after it finds them there.
    await loadsTypeScriptStripper(CLI_BIN, home);
    t.false(await loadsTypeScriptStripper(CLI_BIN, home));
    // What the JavaScript first step spares: run from bin.ts itself, the process strips it, cache or not.
    t.true(await loadsTypeScriptStripper(fileURLToPath(new URL('../src/bin.ts', import.meta.url)), home));
  } finally {
    await rm(home, { recursive: true, force: true });
  }
});

test('the command manifest is what the command groups register (else: run build-command-manifest.ts)', async (t) => {
  const script = fileURLToPath(new URL('../scripts/build-command-manifest.ts', import.meta.url));
  const { stderr } = await promisify(execFile)(process.execPath, [script, '--check'], { timeout: 60_000 });
  t.is(stderr, '');
});
