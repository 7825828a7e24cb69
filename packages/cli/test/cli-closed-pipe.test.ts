import { spawn } from 'node:child_process';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { CLI_BIN } from './helpers/run-cli.ts';

/**
 * A reader that stops early (`svc board get --all --json | head -1`) closes the pipe; the CLI
 * then ends quietly with exit 0, not with an `Error: write EPIPE` stack trace and exit 1.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
  const client = svc.client();
  // Enough output that the CLI is still writing when the reader has gone.
  for (let index = 0; index < 40; index += 1) await client.blackboard.put({ body: { key: 'cli:pipe', value: { text: `post ${index} ${'x'.repeat(4000)}` } } });
});
test.after.always(async () => {
  await svc?.close();
});

test('a closed stdout ends the command quietly with exit 0', async (t) => {
  for (let round = 0; round < 3; round += 1) {
    const child = spawn(process.execPath, [CLI_BIN, 'board', 'get', 'cli:pipe', '--all', '--json'], {
      env: { ...process.env, SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // Read the first line, then close the pipe, as `head -1` does.
    await new Promise<void>((resolve) => {
      child.stdout.once('data', () => {
        child.stdout.destroy();
        resolve();
      });
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    t.is(code, 0, stderr);
    t.false(/EPIPE|Error:|\n\s+at /.test(stderr), stderr);
  }
});
