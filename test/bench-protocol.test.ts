/**
 * `pnpm bench` and the published benchmark protocol stay in step with the benches: every
 * `bench:<name>` script is described in /.well-known/performance.json and hands its figures to
 * the runner through bench/report.ts, and the runner refuses a bench it does not know.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import test from 'ava';
import { performanceProtocol } from '@svc/testing/server-internals';
import { meetsTarget } from '../bench/report.ts';

const root = new URL('..', import.meta.url).pathname;
const run = promisify(execFile);

async function benchScripts(): Promise<Map<string, string>> {
  const manifest = JSON.parse(await readFile(`${root}package.json`, 'utf8')) as { scripts: Record<string, string> };
  const scripts = new Map<string, string>();
  for (const [name, command] of Object.entries(manifest.scripts)) {
    const bench = /^bench:(.+)$/.exec(name)?.[1];
    if (bench) scripts.set(bench, /bench\/[\w-]+\.ts/.exec(command)![0]);
  }
  return scripts;
}

test('every bench script is in the protocol, and every bench in the protocol has a script', async (t) => {
  const scripts = await benchScripts();
  t.deepEqual(
    performanceProtocol()
      .benches.map((bench) => bench.name)
      .sort(),
    [...scripts.keys()].sort(),
  );
});

test('every bench hands its figures to the runner', async (t) => {
  for (const [name, file] of await benchScripts()) {
    const source = await readFile(`${root}${file}`, 'utf8');
    t.regex(source, new RegExp(`reportFigures\\('${name}'`), `${file} does not call reportFigures('${name}', ...)`);
  }
});

test('a target is met at its edge and missed one step past it', (t) => {
  t.true(meetsTarget({ figure: 'ratio', svc: 1, unit: 'x', ratio: 0.85, target: { on: 'ratio', op: '>=', value: 0.85 } }));
  t.false(meetsTarget({ figure: 'ratio', svc: 1, unit: 'x', ratio: 0.8499, target: { on: 'ratio', op: '>=', value: 0.85 } }));
  t.true(meetsTarget({ figure: 'idle', svc: 299.9, unit: 'MiB', target: { on: 'svc', op: '<', value: 300 } }));
  t.false(meetsTarget({ figure: 'idle', svc: 300, unit: 'MiB', target: { on: 'svc', op: '<', value: 300 } }));
  t.false(meetsTarget({ figure: 'no ratio', svc: 1, unit: 'x', target: { on: 'ratio', op: '>=', value: 0.5 } }));
  t.is(meetsTarget({ figure: 'untargeted', svc: 1, unit: 'x' }), undefined);
});

test('pnpm bench refuses a bench it does not know, naming the ones it has', async (t) => {
  const error = await t.throwsAsync(run(process.execPath, ['bench/run.ts', 'no-such-bench'], { cwd: root }));
  const failed = error as Error & { code: number; stderr: string };
  t.is(failed.code, 2);
  t.regex(failed.stderr, /unknown bench no-such-bench; the benches are: http-overhead, /);
});

test('every bench that takes options finds them after the `--` pnpm passes on', async (t) => {
  for (const [name, file] of await benchScripts()) {
    if (!(await readFile(`${root}${file}`, 'utf8')).includes('parseArgs(')) continue;
    // `pnpm bench:<name> -- --flag` runs `node <file> -- --flag`: the flag must reach the options
    // (an unknown one is refused as an option), not be refused as a stray positional argument.
    const error = await t.throwsAsync(run(process.execPath, [file, '--', '--no-such-option'], { cwd: root }), undefined, name);
    t.regex((error as Error & { stderr: string }).stderr, /Unknown option '--no-such-option'/, `${file} does not read its options past a '--'`);
  }
});
