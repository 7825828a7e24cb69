import test from 'ava';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { launchChromium, recordCspViolations, WIDE } from './helpers/browser.ts';

/**
 * The first response's data block holds at most 1 MiB of answers (issue 45;
 * packages/server/src/console/first-load.ts, MAX_INLINED_BYTES): a channel whose reads come to
 * exactly 1 MiB of JSON is inlined, one a byte past it is not, and that page still shows its posts
 * by reading the API. Debian's Chromium against a real server.
 */
const CAP = 1024 * 1024;
/** Filler posts of about 60 KB each (a value holds at most 64 KiB): 16 of them come near the cap. */
const PAD = 60_000;

let svc: TestServer;
let browser: Browser;
test.before(async () => {
  [svc, browser] = await Promise.all([startTestServer(), launchChromium()]);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

const BLOCK = /<script type="application\/json" id="svc-first-load">([^<]*)<\/script>/;

/** The JSON text of a GET as the API answers it: the data block counts these bytes. */
async function answerText(path: string): Promise<string> {
  const response = await fetch(`${svc.baseUrl}${path}`, { headers: { accept: 'application/json' } });
  return response.text();
}

/** The bytes the channel page's reads inline (the root document and the channel's first page of 50), as the server counts them. */
async function channelReadBytes(key: string): Promise<number> {
  const [root, page] = await Promise.all([answerText('/'), answerText(`/api/v1/blackboard/get?${new URLSearchParams({ key, limit: '50' })}`)]);
  return Buffer.byteLength(root) + Buffer.byteLength(page);
}

/**
 * Fills channel `key` until its page's reads come to exactly `target` bytes. Each post past the
 * first adds its padding and an overhead (its record's other fields, a comma), measured rather
 * than worked out, so the test does not restate the record's shape. The overhead is not quite
 * the same for every padding (the record's screening notes differ with its size), so every post
 * after the two measured carries about the same padding, and the last one what is left.
 */
async function fillChannelTo(key: string, target: number): Promise<void> {
  const client = svc.client();
  const put = (pad: number) => client.blackboard.put({ body: { key, value: { text: 'Padding for the data block cap', kind: 'note', pad: 'a'.repeat(pad) } } });
  await put(PAD);
  const one = await channelReadBytes(key);
  await put(PAD);
  let bytes = await channelReadBytes(key);
  const overhead = bytes - one - PAD;
  const posts = Math.ceil((target - bytes) / (PAD + overhead));
  const each = Math.floor((target - bytes) / posts) - overhead;
  for (let post = 1; post < posts; post++) await put(each);
  bytes = await channelReadBytes(key);
  await put(target - bytes - overhead);
}

test('a page whose reads are exactly 1 MiB is inlined; a byte past it is not, and the page reads the API and shows its posts', async (t) => {
  await fillChannelTo('ui:cap-at', CAP);
  await fillChannelTo('ui:cap-ab', CAP + 1);
  t.is(await channelReadBytes('ui:cap-at'), CAP, 'the first channel comes to exactly the cap');
  t.is(await channelReadBytes('ui:cap-ab'), CAP + 1, 'the second to a byte past it');

  const inlined = async (key: string) => {
    const html = await (await fetch(`${svc.baseUrl}/ui/channel?${new URLSearchParams({ key })}`, { headers: { accept: 'text/html' } })).text();
    return Object.keys((JSON.parse(BLOCK.exec(html)![1]!) as { answers: Record<string, unknown> }).answers).sort();
  };
  t.deepEqual(await inlined('ui:cap-at'), ['GET /', 'GET /api/v1/blackboard/get?key=ui%3Acap-at&limit=50']);
  t.deepEqual(await inlined('ui:cap-ab'), ['GET /'], 'past the cap the channel page is left out');

  for (const [key, reads] of [
    ['ui:cap-at', false],
    ['ui:cap-ab', true],
  ] as const) {
    const context = await browser.newContext({ viewport: WIDE });
    const violations = await recordCspViolations(context);
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => request.resourceType() === 'fetch' && requested.push(new URL(request.url()).pathname));
    await page.goto(`${svc.baseUrl}/ui/channel?${new URLSearchParams({ key })}`);
    await page.locator('#app .post-text').first().waitFor({ timeout: 30_000 });
    t.true((await page.locator('#app .post-text').count()) >= 16, `${key}: every post is shown`);
    t.is(requested.includes('/api/v1/blackboard/get'), reads, `${key}: ${reads ? 'read from the API' : 'from the data block'}`);
    t.deepEqual(violations, [], key);
    await context.close();
  }
});
