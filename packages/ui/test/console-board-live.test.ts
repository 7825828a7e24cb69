import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { everyWidthAndScheme, launchChromium, recordCspViolations, WIDE } from './helpers/browser.ts';

/**
 * The board live and findable (issue 45): a channel page follows the channel's push stream, so a
 * post made through the API appears without a reload, once; the board's lists page with "Load
 * more"; the board searches as you type. Debian's Chromium against a real
 * server; axe at every impact level, at both widths and in both schemes, and no CSP violation.
 */
let svc: TestServer;
let browser: Browser;
let page: Page;
let violations: string[];
const errors: string[] = [];
const requests: string[] = [];

test.before(async () => {
  [svc, browser] = await Promise.all([
    startTestServer({ env: { SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: '1000', SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: '1000' } }),
    launchChromium(),
  ]);
  const context = await browser.newContext({ viewport: WIDE });
  violations = await recordCspViolations(context);
  page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test.serial('a channel page shows a post made through the API without a reload, once, through the push stream', async (t) => {
  const client = svc.client();
  const key = 'ui:live';
  await client.blackboard.put({ body: { key, value: { text: 'Already there', kind: 'note' } } });
  await page.goto(`${svc.baseUrl}/ui/channel?key=${encodeURIComponent(key)}`);
  await page.getByText('Already there').waitFor({ timeout: 15_000 });
  await page.locator('[data-live=live]').waitFor({ timeout: 15_000 });
  const navigations = requests.filter((path) => path === '/ui/channel').length;
  const readsBefore = requests.filter((path) => path === '/api/v1/blackboard/get').length;
  // The first page came inside the page itself (first-load): no read of the channel at all.
  t.is(readsBefore, 0);

  await client.blackboard.put({ body: { key, value: { text: 'Pushed while the page was open', kind: 'note' } } });
  // Well under the polling loop's first 5 s wait: only the push stream brings it this soon.
  await page.getByText('Pushed while the page was open').waitFor({ timeout: 4_000 });
  await client.blackboard.put({ body: { key, value: { text: 'A second one behind it', kind: 'note' } } });
  await page.getByText('A second one behind it').waitFor({ timeout: 4_000 });

  // Once each, newest first, with no reload and no read of the channel after the first.
  t.deepEqual(await page.locator('.post .post-text').allTextContents(), ['A second one behind it', 'Pushed while the page was open', 'Already there']);
  t.is(requests.filter((path) => path === '/ui/channel').length, navigations);
  t.is(requests.filter((path) => path === '/api/v1/blackboard/get').length, readsBefore);
  t.true(requests.includes('/api/v1/blackboard/watch'));

  t.deepEqual(await everyWidthAndScheme(page), []);
  t.deepEqual(violations.splice(0), []);
  t.deepEqual(errors, []);
});

test.serial('the board pages its channels and recent posts with Load more, keeping the filters, each row once', async (t) => {
  const client = svc.client();
  // 25 channels of one post each under a topic of their own: two pages of 20 in each list.
  for (let n = 0; n < 25; n++)
    await client.blackboard.put({
      body: { key: `ui:page-${String(n).padStart(2, '0')}`, value: { text: `Paged post ${n}`, kind: 'note', topics: ['paging'] } },
    });
  await client.blackboard.put({ body: { key: 'ui:page-other', value: { text: 'Not under the topic', kind: 'note' } } });
  await page.goto(`${svc.baseUrl}/ui/?topic=paging`);
  const channels = page.locator('.channel-list > .channel');
  const posts = page.locator('section[aria-labelledby=recent-heading] .post');
  await channels.first().waitFor({ timeout: 15_000 });
  t.is(await channels.count(), 20);
  t.is(await posts.count(), 20);

  await page.getByRole('button', { name: 'Load more channels' }).click();
  await page.getByRole('button', { name: 'Load more channels' }).waitFor({ state: 'detached', timeout: 10_000 });
  t.is(await channels.count(), 25);
  t.is(new Set(await page.locator('.channel-list > .channel > .channel-key').allTextContents()).size, 25);

  await page.getByRole('button', { name: 'Load more posts' }).click();
  await page.getByRole('button', { name: 'Load more posts' }).waitFor({ state: 'detached', timeout: 10_000 });
  const texts = await posts.locator('.post-text').allTextContents();
  t.is(texts.length, 25);
  t.is(new Set(texts).size, 25);
  t.false(texts.includes('Not under the topic'));
  t.is(texts.at(-1), 'Paged post 0');

  t.deepEqual(await everyWidthAndScheme(page), []);
  t.deepEqual(violations.splice(0), []);
  t.deepEqual(errors, []);
});

test.serial('the board searches as you type: one request per pause, the older search aborted, its late answer never shown', async (t) => {
  const client = svc.client();
  await client.blackboard.put({ body: { key: 'ui:type-a', value: { text: 'Which reranker works offline?', kind: 'ask' } } });
  await client.blackboard.put({ body: { key: 'ui:type-b', value: { text: 'An embedding model for code', kind: 'note' } } });
  await page.goto(`${svc.baseUrl}/ui/`);
  await page.locator('.channel-list > .channel').first().waitFor({ timeout: 15_000 });
  const searches = () => requests.filter((path) => path === '/api/v1/blackboard/query').length;
  const box = page.getByRole('searchbox', { name: 'Text' });

  // Typed a key every 40 ms: the debounce waits for the pause, so one search, not seven.
  const before = searches();
  await box.pressSequentially('reranker', { delay: 40 });
  await page.waitForURL(/\?q=reranker$/, { timeout: 10_000 });
  await waitUntil('the board shows the search', async () => (await page.locator('.channel-list .channel-key').allTextContents()).join() === 'ui:type-a', {
    timeoutMs: 10_000,
  });
  t.is(searches() - before, 1);
  t.deepEqual(await page.locator('.channel-list .channel-key').allTextContents(), ['ui:type-a']);
  t.true(await box.evaluate((element) => element === document.activeElement), 'the box keeps focus while the board reloads');

  // A search whose answer is held back 3 s; typing on aborts it, and its late answer never replaces the newer one.
  const aborted: string[] = [];
  page.on('requestfailed', (request) => request.url().includes('q=slow') && aborted.push(new URL(request.url()).pathname));
  await page.route(/q=slow/, async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await route.continue().catch(() => undefined);
  });
  await box.fill('slow');
  await page.waitForRequest(/\/query\?.*q=slow/, { timeout: 10_000 });
  await box.fill('embedding');
  await page.waitForURL(/\?q=embedding$/, { timeout: 10_000 });
  await waitUntil('the board shows the newer search', async () => (await page.locator('.channel-list .channel-key').allTextContents()).join() === 'ui:type-b', {
    timeoutMs: 10_000,
  });
  await new Promise((resolve) => setTimeout(resolve, 3_500));
  t.deepEqual(await page.locator('.channel-list .channel-key').allTextContents(), ['ui:type-b']);
  t.deepEqual(await page.locator('section[aria-labelledby=recent-heading] .post-text').allTextContents(), ['An embedding model for code']);
  t.deepEqual(aborted.sort(), ['/api/v1/blackboard/channels', '/api/v1/blackboard/query']);
  await page.unroute(/q=slow/);

  t.deepEqual(await everyWidthAndScheme(page), []);
  t.deepEqual(violations.splice(0), []);
  t.deepEqual(errors, []);
});

test.serial('with SVC_API_PORT the channel page follows the push stream on the api surface, across origins, with no CSP violation', async (t) => {
  const split = await startTestServer({ env: { SVC_API_PORT: '0' } });
  try {
    t.not(new URL(split.apiUrl).origin, new URL(split.baseUrl).origin);
    const key = 'ui:split-live';
    await split.client().blackboard.put({ body: { key, value: { text: 'First across origins', kind: 'note' } } });
    const streams: string[] = [];
    page.on('request', (request) => request.url().startsWith(`${split.apiUrl}/api/v1/blackboard/watch`) && streams.push(request.url()));
    await page.goto(`${split.baseUrl}/ui/channel?key=${encodeURIComponent(key)}`);
    await page.locator('[data-live=live]').waitFor({ timeout: 15_000 });
    await split.client().blackboard.put({ body: { key, value: { text: 'Pushed across origins', kind: 'note' } } });
    await page.getByText('Pushed across origins').waitFor({ timeout: 4_000 });
    t.is(streams.length, 1);
    t.deepEqual(violations.splice(0), []);
    t.deepEqual(errors, []);
  } finally {
    await split.close();
  }
});
