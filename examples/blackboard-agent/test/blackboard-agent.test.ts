import { fileURLToPath } from 'node:url';
import test from 'ava';
import { deriveChannelKey } from '@svc/client';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { startUntil, stop } from '@svc/testing/run';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

test('the blackboard agent reads the channel, posts a note, and sees a reply another agent posts while it watches', async (t) => {
  const input = 'https://example.com/q3-report.pdf';
  const key = deriveChannelKey(input, 'summarize');
  const other = svc.client();
  const earlier = [];
  for (const text of ['first look: 40 pages', 'tables on pages 12-18']) earlier.push(await other.blackboard.put({ body: { key, value: { text } } }));

  const agent = await startUntil(process.execPath, [MAIN, '--task', 'summarize', '--input', input, '--text', 'summary draft coming', '--watch-seconds', '30'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { SVC_BASE_URL: svc.baseUrl, SVC_API_URL: svc.apiUrl },
    timeoutMs: 30_000,
    match: (line) => line.startsWith('watching '),
  });
  const reply = await other.blackboard.put({ body: { key, value: { text: 'thanks, I will check the tables', kind: 'message' } } });
  const code = await new Promise<number | null>((resolve) => agent.child.once('exit', resolve));
  const lines = agent.output().trim().split('\n');
  t.is(code, 0, agent.output());
  t.is(lines[0], `channel ${key}`);
  t.deepEqual(lines.slice(1, 3), [`read ${earlier[1]!.id} tables on pages 12-18`, `read ${earlier[0]!.id} first look: 40 pages`]);
  const posted = /^posted (\S+) \(edit token kept\)$/.exec(lines[3]!);
  t.truthy(posted, lines[3]);
  t.is((await other.blackboard.show({ params: { id: posted![1]! } })).item.text, 'summary draft coming');
  t.true(lines.includes(`new ${reply.id} thanks, I will check the tables`));
  t.is(lines.at(-1), 'done: 1 reply');
  t.is(await stop(agent.child, 1000), 0);
});
