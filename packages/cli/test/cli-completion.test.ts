import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { runCli } from './helpers/run-cli.ts';

/**
 * `svc completion bash|zsh|fish` prints a static script from the command tree; each is loaded into
 * its real shell and asked what a Tab offers. bash is everywhere; zsh and fish are installed by
 * .ci/run (apt-get install zsh fish), and where one is missing its script is only checked for shape.
 */
const exec = promisify(execFile);
const scripts: Record<string, string> = {};
test.before(async () => {
  for (const shell of ['bash', 'zsh', 'fish']) {
    const run = await runCli(['completion', shell]);
    if (run.code !== 0) throw new Error(`svc completion ${shell}: ${run.stderr}`);
    const file = path.join(tmpdir(), `svc-completion-${process.pid}.${shell}`);
    await writeFile(file, run.stdout);
    scripts[shell] = file;
  }
});

/** What bash's completion offers for the words typed so far (the last is the word under the cursor). */
async function bashOffers(words: string[]): Promise<string[]> {
  const array = words.map((word) => `'${word}'`).join(' ');
  const { stdout } = await exec('bash', [
    '-c',
    `source '${scripts.bash}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _svc_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
  ]);
  return stdout.split('\n').filter(Boolean);
}

test('bash: commands, subcommands after flags and their values, and flags of the command typed', async (t) => {
  t.deepEqual(await bashOffers(['svc', 'bo']), ['board']);
  t.deepEqual((await bashOffers(['svc', 'board', ''])).sort(), ['channels', 'get', 'put', 'query', 'show', 'tombstone', 'watch']);
  t.deepEqual(await bashOffers(['svc', '--base-url', 'http://x', 'board', 'wa']), ['watch']);
  t.deepEqual(await bashOffers(['svc', 'models', 'l']), ['list']);
  const flags = await bashOffers(['svc', 'board', 'get', '--']);
  for (const flag of ['--limit', '--since', '--all', '--json', '--token', '--help']) t.true(flags.includes(flag), flag);
  t.deepEqual(await bashOffers(['svc', 'completion', '--h']), ['--help']);
});

test('zsh: the script loads under compinit and completes a subcommand', async (t) => {
  if (!existsSync('/usr/bin/zsh')) {
    t.log('zsh is not installed here (.ci/run installs it): the script is checked for shape only');
    const text = await import('node:fs/promises').then((fs) => fs.readFile(scripts.zsh!, 'utf8'));
    t.regex(text, /^#compdef svc\n/);
    t.regex(text, /compdef _svc svc/);
    return;
  }
  await exec('zsh', ['-n', scripts.zsh!]);
  // compadd only works inside a completion widget; a stand-in records what _svc would offer.
  const { stdout } = await exec('zsh', [
    '-fc',
    `autoload -U compinit; compinit -u; source '${scripts.zsh}'; compadd() { shift; print -l -- "$@"; }; words=(svc board wa); CURRENT=3; PREFIX=wa; _svc`,
  ]);
  t.true(stdout.split('\n').includes('watch'), stdout);
});

test('fish: the script loads and completes subcommands with their descriptions', async (t) => {
  if (!existsSync('/usr/bin/fish')) {
    t.log('fish is not installed here (.ci/run installs it): the script is checked for shape only');
    const text = await import('node:fs/promises').then((fs) => fs.readFile(scripts.fish!, 'utf8'));
    t.regex(text, /complete -c svc -f -a '\(__svc_complete\)'/);
    return;
  }
  const { stdout } = await exec('fish', ['--no-config', '-c', `source '${scripts.fish}'; complete -C 'svc board wa'`]);
  t.regex(stdout, /^watch\t/m);
  const top = await exec('fish', ['--no-config', '-c', `source '${scripts.fish}'; complete -C 'svc mode'`]);
  t.regex(top.stdout, /^models\tThe engines and models this server serves/m);
});

test('an unknown shell is a usage error', async (t) => {
  const run = await runCli(['completion', 'tcsh']);
  t.is(run.code, 2);
  t.regex(run.stderr, /completion knows bash, zsh, fish, not "tcsh"/);
});
