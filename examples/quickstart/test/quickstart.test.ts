import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';

const run = promisify(execFile);

test('the quickstart example starts a server and calls it with the client', async (t) => {
  const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const { stdout } = await run(process.execPath, [main], { timeout: 60_000 });
  t.regex(stdout, /^health: ok \(database embedded\)$/m);
  t.regex(stdout, /^service: svc \d+\.\d+\.\d+, OpenAPI at http:\/\/127\.0\.0\.1:\d+\/openapi\.json$/m);
  t.regex(stdout, /^without a token: 401 unauthorized$/m);
  t.regex(stdout, /^engines: builtin/m);
});
