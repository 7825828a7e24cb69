import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { timeAgo } from '../src/components/time-ago.ts';
import { everyWidthAndScheme, launchChromium, recordCspViolations, screenshots, WIDE } from './helpers/browser.ts';

/**
 * Threads as GitHub shows them (issue 45): replies nested under their parent, a Reply link on
 * each, parents named by their text rather than their `bb_…` id, and relative times with the
 * exact time on hover. Debian's Chromium against a real server.
 */
let svc: TestServer;
let browser: Browser;
let page: Page;
let violations: string[];
const errors: string[] = [];

test.before(async () => {
  [svc, browser] = await Promise.all([startTestServer(), launchChromium()]);
  const context = await browser.newContext({ viewport: WIDE });
  violations = await recordCspViolations(context);
  page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test('relative times say the largest whole unit, as GitHub does', (t) => {
  const now = Date.parse('2026-12-07T12:00:00Z');
  const ago = (seconds: number) => timeAgo(new Date(now - seconds * 1000).toISOString(), now);
  t.is(ago(20), 'just now');
  t.is(ago(60), '1 minute ago');
  t.is(ago(2 * 3600 + 59), '2 hours ago');
  t.is(ago(86_400), 'yesterday');
  t.is(ago(3 * 86_400), '3 days ago');
  t.is(ago(400 * 86_400), 'last year');
});

test.serial('a thread: nested replies with a Reply link on each, parents by their text, times relative with the exact time on hover', async (t) => {
  const client = svc.client();
  const key = 'ui:thread';
  const root = await client.blackboard.put({ body: { key, value: { text: 'Which reranker works offline?', kind: 'ask' } } });
  const first = await client.blackboard.put({ body: { key, value: { text: 'The hashed n-gram one does.', parent_id: root.id } } });
  const second = await client.blackboard.put({ body: { key, value: { text: 'Does it need a GPU?', parent_id: first.id } } });
  await client.blackboard.put({ body: { key, value: { text: 'No, a CPU is enough.', parent_id: second.id } } });
  await client.blackboard.put({ body: { key, value: { text: 'Thanks, trying it now.', parent_id: root.id } } });

  await page.goto(`${svc.baseUrl}/ui/item/${root.id}`);
  await page.getByRole('heading', { name: 'Replies (4)' }).waitFor({ timeout: 15_000 });

  // Nesting: two replies to the root at the top, the others each under its parent.
  const top = page.locator('section .thread').first().locator(':scope > li');
  t.is(await top.count(), 2);
  t.deepEqual(await top.locator(':scope > .post .post-text').allTextContents(), ['The hashed n-gram one does.', 'Thanks, trying it now.']);
  const nested = top.first().locator(':scope > .thread > li');
  t.is(await nested.locator(':scope > .post .post-text').textContent(), 'Does it need a GPU?');
  t.is(await nested.locator(':scope > .thread > li > .post .post-text').textContent(), 'No, a CPU is enough.');

  // Parents are named by what they say; no bb_ id is shown anywhere on the page.
  t.is(await nested.locator(':scope > .thread > li > .post .parent-link').textContent(), 'in reply to “Does it need a GPU?”');
  t.is(await top.first().locator(':scope > .post .parent-link').textContent(), 'in reply to “Which reranker works offline?”');
  t.notRegex((await page.locator('main').textContent()) ?? '', /bb_/);

  // A Reply link on each post (the root too), to the write form with the parent filled in.
  t.is(await page.getByRole('link', { name: /^Reply to “/ }).count(), 5);
  await page.getByRole('link', { name: 'Reply to “Does it need a GPU?”', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/ui/post' && url.searchParams.get('parent_id') === second.id && url.searchParams.get('key') === key);
  await page.goBack();
  await page.getByRole('heading', { name: 'Replies (4)' }).waitFor({ timeout: 15_000 });

  // Times: relative words, the exact time on hover, the instant in datetime.
  const time = page.locator('.post time').first();
  t.regex((await time.textContent()) ?? '', /^(just now|\d+ minutes? ago)$/);
  t.is(await time.getAttribute('datetime'), root.created_at);
  const exact = await page.evaluate((iso) => new Date(iso).toLocaleString(), root.created_at);
  t.is(await time.getAttribute('title'), exact);

  t.deepEqual(await everyWidthAndScheme(page), []);
  await screenshots(page, 'thread');
  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
});

test.serial('the navigation marks the page shown, and its section from a channel or a thread', async (t) => {
  const current = () => page.locator('header nav a[aria-current="page"]').allTextContents();
  const root = await svc.client().blackboard.put({ body: { key: 'ui:nav', value: { text: 'A post to open' } } });
  for (const [path, marked] of [
    ['/ui/', ['Board']],
    ['/ui/channel?key=ui%3Anav', ['Board']],
    [`/ui/item/${root.id}`, ['Board']],
    ['/ui/post', ['Post']],
    ['/ui/catalog', ['Catalog']],
    ['/ui/rankings', ['Rankings']],
    ['/ui/sign-in', []],
  ] as const) {
    await page.goto(`${svc.baseUrl}${path}`);
    await page.locator('main h1').first().waitFor({ timeout: 10_000 });
    t.deepEqual(await current(), [...marked], `${path} (the page is at ${await page.evaluate(() => location.pathname)})`);
  }
  // A navigation inside the page moves the mark with it.
  await page.getByRole('link', { name: 'Catalog' }).click();
  await page.waitForURL(/\/ui\/catalog$/);
  t.deepEqual(await current(), ['Catalog']);
  t.deepEqual(await everyWidthAndScheme(page), []);
  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
});

test.serial('sign in with a developer key: checked first, its pages shown, signing out forgets it and leaves it valid', async (t) => {
  const agent = await signInAgent(svc);
  const key = (await createKey(agent.client, ['jobs:read', 'jobs:write'], 'console key')).secret;
  const context = await browser.newContext({ viewport: WIDE });
  const keyViolations = await recordCspViolations(context);
  const keyPage = await context.newPage();
  try {
    await keyPage.goto(`${svc.baseUrl}/ui/sign-in`);
    await keyPage.locator('main h1').waitFor({ timeout: 10_000 });
    t.deepEqual(await everyWidthAndScheme(keyPage), []);
    // A key the server does not know makes no session.
    await keyPage.getByLabel(/^Developer key/).fill(`${key.slice(0, -4)}xxxx`);
    await keyPage.getByRole('button', { name: 'Use the developer key' }).click();
    t.regex((await keyPage.getByRole('alert').textContent({ timeout: 10_000 })) ?? '', /does not know this key/);
    t.is(await keyPage.evaluate(() => sessionStorage.getItem('svc.console.session')), null);
    // The operator token is not a developer key either.
    await keyPage.getByLabel(/^Developer key/).fill(svc.operatorToken);
    await keyPage.getByRole('button', { name: 'Use the developer key' }).click();
    await keyPage.getByText('This is not a developer key.').waitFor({ timeout: 10_000 });

    await keyPage.getByLabel(/^Developer key/).fill(key);
    await keyPage.getByRole('button', { name: 'Use the developer key' }).click();
    await keyPage.waitForURL(/\/ui\/jobs$/, { timeout: 10_000 });
    await keyPage.getByText('Signed in with a key').waitFor({ timeout: 10_000 });
    t.deepEqual(await keyPage.locator('header nav a').allTextContents(), ['Board', 'Post', 'Catalog', 'Rankings', 'Jobs', 'Requests']);
    t.is(await keyPage.getByRole('alert').count(), 0);

    await keyPage.getByRole('button', { name: 'Sign out' }).click();
    // Signing out loads its module first (session-badge.tsx imports it on click): wait for it to end.
    await keyPage.waitForFunction(() => sessionStorage.getItem('svc.console.session') === null, undefined, { timeout: 10_000 });
    t.is(await keyPage.evaluate(() => sessionStorage.getItem('svc.console.session')), null);
    t.is((await svc.client({ token: key }).oauth.whoami()).credential, 'developer_key', 'the key still works');
    t.deepEqual(keyViolations, [], 'no securitypolicyviolation');
  } finally {
    await context.close();
  }
});

test.serial('empty states say what to do next, with the link that does it', async (t) => {
  await page.goto(`${svc.baseUrl}/ui/channel?key=ui%3Aempty`);
  const empty = page.getByTestId('empty-channel');
  t.regex((await empty.textContent({ timeout: 10_000 })) ?? '', /^No live posts in this channel yet\. Write the first one/);
  t.is(await empty.getByRole('link', { name: 'Write the first one' }).getAttribute('href'), '/ui/post?key=ui%3Aempty');

  await page.goto(`${svc.baseUrl}/ui/?kind=ask&q=nothing-matches-this`);
  const none = page.getByTestId('empty-channels');
  await none.waitFor({ timeout: 10_000 });
  t.is(await none.getByRole('link', { name: 'Clear the filters' }).getAttribute('href'), '/ui/');
  t.is(await page.getByTestId('empty-posts').getByRole('link', { name: 'Write one' }).getAttribute('href'), '/ui/post');
  t.deepEqual(await everyWidthAndScheme(page), []);
  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
});
