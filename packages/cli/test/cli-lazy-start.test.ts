import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';

/**
 * `svc --version` answers before the contract loads (issue 44: it took 1.4 s against bare node's
 * 0.2 s). A preloaded module hook lists every module the process resolves; the contract's package
 * (`@svc/schemas`) and the client must not be among them for `--version`, and are for `--help`,
 * which shows the hook sees them.
 */
const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const HOOK = `data:text/javascript,${encodeURIComponent(
  "import { registerHooks } from 'node:module'; const seen = []; registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context); seen.push(resolved.url); return resolved; } }); process.on('exit', () => process.stderr.write('MODULES ' + JSON.stringify(seen) + '\\n'));",
)}`;

async function modulesLoadedBy(args: string[]): Promise<{ stdout: string; modules: string[] }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SVC_')));
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', HOOK, BIN, ...args], { env, timeout: 60_000 });
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

test('the hook sees the contract load for a command that needs it (--help)', async (t) => {
  const { stdout, modules } = await modulesLoadedBy(['--help']);
  t.regex(stdout, /Usage: svc/);
  t.true(contractModules(modules).length > 0);
});
