import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { table } from '../src/output.ts';
import { CLI_BIN, runCli } from './helpers/run-cli.ts';

/** Tables fit the terminal they are printed on (`…` where a line is cut), and are whole in a pipe. */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('a table is cut to the width it is given, and left whole without one', (t) => {
  const rows = [
    ['ID', 'DESCRIPTION'],
    ['a', 'x'.repeat(100)],
  ];
  t.deepEqual(
    table(rows, 20)
      .split('\n')
      .map((line) => line.length),
    [15, 20],
  );
  t.true(table(rows, 20).endsWith('…'));
  t.is(table(rows, Number.POSITIVE_INFINITY).split('\n')[1], `a   ${'x'.repeat(100)}`);
});

test('svc models on a 60-column terminal prints no line wider than 60; in a pipe the lines are whole', async (t) => {
  // util-linux `script` gives the CLI a terminal; stty sets its width as a resized window would.
  const command = `stty cols 60; '${process.execPath}' '${CLI_BIN}' models`;
  const { stdout } = await promisify(execFile)('script', ['-qec', command, '/dev/null'], {
    env: { ...process.env, SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken },
  });
  const lines = stdout.replaceAll('\r', '').split('\n').filter(Boolean);
  t.true(lines.length > 2, stdout);
  for (const line of lines) t.true([...line].length <= 60, `${[...line].length}: ${line}`);
  t.true(
    lines.some((line) => line.endsWith('…')),
    'some line was cut',
  );
  const piped = await runCli(['models'], { env: { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken } });
  t.true(
    piped.stdout.split('\n').some((line) => line.length > 60),
    'a pipe gets whole lines',
  );
  t.false(piped.stdout.includes('…'));
});
