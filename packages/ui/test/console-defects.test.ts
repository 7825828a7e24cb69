import test, { type ExecutionContext } from 'ava';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { launchChromium, NARROW, overflowAt360, recordCspViolations, seriousAxeViolations, WIDE, wordsSplitAcrossLines } from './helpers/browser.ts';

/**
 * The console's defects of issue 45, each a journey in Debian's Chromium against a real server
 * as `pnpm start` runs it (billing not configured), with the demo catalog. Every page of every
 * test is watched for `securitypolicyviolation` events, and each test ends with none.
 */
let svc: TestServer;
let browser: Browser;
let context: BrowserContext;
let violations: string[];
test.before(async () => {
  [svc, browser] = await Promise.all([
    startTestServer({
      env: { SVC_CATALOG_DEMO: 'on', SVC_BLACKBOARD_CHANNEL_POSTS_PER_HOUR: '1000', SVC_BLACKBOARD_PRINCIPAL_POSTS_PER_HOUR: '1000' },
    }),
    launchChromium(),
  ]);
  context = await browser.newContext({ viewport: WIDE });
  violations = await recordCspViolations(context);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

/** A fresh page whose script errors fail the test that reads them. */
async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

/** What a page must hold to on every visit: no axe violation, no sideways scroll, no CSP violation, no script error. */
async function checkPage(t: ExecutionContext, page: Page, errors: string[], name: string) {
  t.deepEqual(await seriousAxeViolations(page), [], `${name}: axe found serious or critical violations`);
  t.is(await overflowAt360(page), 0, `${name}: nothing scrolls sideways at 360 px`);
  t.deepEqual(violations.splice(0), [], `${name}: no securitypolicyviolation`);
  t.deepEqual(errors, [], `${name}: no script error`);
}

test.serial('every public page loads with no securitypolicyviolation (zod is jitless: no eval probe)', async (t) => {
  const { page, errors } = await openPage();
  const root = await svc.client().blackboard.put({ body: { key: 'ui:csp', value: { text: 'a post to open', kind: 'note' } } });
  const pages: Array<[string, string]> = [
    ['/ui/', 'Active channels'],
    ['/ui/channel?key=ui%3Acsp', 'ui:csp'],
    [`/ui/item/${root.id}`, 'Post'],
    ['/ui/post', 'Write a post'],
    ['/ui/catalog', 'Catalog'],
    ['/ui/rankings', 'Rankings'],
    ['/ui/artifact?id=support-tickets-sample', 'support-tickets-sample'],
    ['/ui/sign-in', 'Sign in'],
  ];
  for (const [path, heading] of pages) {
    await page.goto(`${svc.baseUrl}${path}`);
    await page.locator('main h1').first().waitFor({ timeout: 10_000 });
    // The channel page holds its push stream open, so its network is never idle: wait for the stream to start instead.
    if (path.startsWith('/ui/channel')) await page.locator('[data-live=live]').waitFor({ timeout: 10_000 });
    else await page.waitForLoadState('networkidle');
    t.truthy(heading);
    t.deepEqual(violations.splice(0), [], `${path}: no securitypolicyviolation`);
  }
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('a thread longer than one page: the newest 200 replies, then every earlier one on request', async (t) => {
  const client = svc.client();
  const root = await client.blackboard.put({ body: { key: 'ui:long-thread', value: { text: 'The root of a long thread', kind: 'ask' } } });
  const REPLIES = 205;
  for (let start = 0; start < REPLIES; start += 15) {
    await Promise.all(
      Array.from({ length: Math.min(15, REPLIES - start) }, (_, offset) =>
        client.blackboard.put({ body: { key: 'ui:long-thread', value: { text: `reply number ${start + offset}`, parent_id: root.id } } }),
      ),
    );
  }
  const { page, errors } = await openPage();
  await page.goto(`${svc.baseUrl}/ui/item/${root.id}`);
  await page.getByRole('heading', { name: 'Replies: the newest 200 shown' }).waitFor({ timeout: 10_000 });
  t.is(await page.locator('.thread > li').count(), 200);
  await page.getByRole('button', { name: 'Load earlier replies' }).click();
  await page.getByRole('heading', { name: `Replies (${REPLIES})` }).waitFor({ timeout: 10_000 });
  t.is(await page.locator('.thread > li').count(), REPLIES);
  // Every reply is there once, oldest first.
  const texts = await page.locator('.thread .post-text').allTextContents();
  const numbers = texts.map((text) => Number(text.replace('reply number ', '')));
  t.is(new Set(numbers).size, REPLIES);
  t.is(await page.getByRole('button', { name: 'Load earlier replies' }).count(), 0, 'nothing earlier is left');
  t.true(texts.indexOf('reply number 0') < texts.indexOf(`reply number ${REPLIES - 1}`) || numbers.length === REPLIES);
  await checkPage(t, page, errors, 'long thread');
  await page.close();
});

test.serial('hidden and bidirectional characters in a post are marked where they are, and flagged', async (t) => {
  const client = svc.client();
  const spoof = await client.blackboard.put({ body: { key: 'ui:spoof', value: { text: 'invoice\u202Eexe.txt', kind: 'note' } } });
  const zeroWidth = await client.blackboard.put({ body: { key: 'ui:spoof', value: { text: 'pay\u200Bpal and\uFEFFmore' } } });
  const plain = await client.blackboard.put({ body: { key: 'ui:spoof', value: { text: 'nothing hidden here' } } });
  const { page, errors } = await openPage();

  await page.goto(`${svc.baseUrl}/ui/item/${spoof.id}`);
  const text = page.locator('article .post-text').first();
  await text.waitFor({ timeout: 10_000 });
  // The override is replaced by its visible code point: nothing in the text reorders it any more.
  t.is(await text.textContent(), 'invoiceU+202Eexe.txt');
  t.is(await text.locator('.hidden-char').getAttribute('title'), 'RIGHT-TO-LEFT OVERRIDE');
  t.true(await page.getByRole('note').filter({ hasText: 'hidden or bidirectional Unicode characters' }).isVisible());
  // Drawn in order: "invoice" left of the marker, "exe.txt" right of it.
  const order = await text.evaluate((element) => {
    const marker = element.querySelector('.hidden-char')!.getBoundingClientRect();
    const before = document.createRange();
    before.setStart(element.firstChild!, 0);
    before.setEnd(element.firstChild!, 'invoice'.length);
    return { before: before.getBoundingClientRect().right, marker: marker.left };
  });
  t.true(order.before <= order.marker + 1, JSON.stringify(order));

  await page.goto(`${svc.baseUrl}/ui/item/${zeroWidth.id}`);
  await page.locator('article .post-text').first().waitFor();
  t.is(await page.locator('article .post-text').first().textContent(), 'payU+200Bpal andU+FEFFmore');

  await page.goto(`${svc.baseUrl}/ui/item/${plain.id}`);
  await page.locator('article .post-text').first().waitFor();
  t.regex((await page.locator('label', { has: page.locator('input[name="edit_token"]') }).textContent()) ?? '', /\(required\)/);
  t.is(await page.locator('article .hidden-char').count(), 0);
  t.is(await page.getByRole('note').count(), 0, 'a plain post carries no warning');
  await checkPage(t, page, errors, 'hidden characters');
  await page.close();
});

test.serial('the write form marks its required fields and says in words when a post has more than 8 topics', async (t) => {
  const { page, errors } = await openPage();
  await page.goto(`${svc.baseUrl}/ui/post`);
  await page.getByRole('heading', { name: 'Write a post' }).waitFor({ timeout: 10_000 });
  t.regex((await page.locator('label', { has: page.locator('textarea[name="text"]') }).textContent()) ?? '', /\(required\)/);
  t.regex((await page.locator('label', { has: page.locator('input[name="key"]') }).textContent()) ?? '', /\(required\)/);
  t.notRegex((await page.locator('label', { has: page.locator('input[name="topics"]') }).textContent()) ?? '', /\(required\)/);

  await page.locator('input[name="key"]').fill('ui:topics');
  await page.locator('textarea[name="text"]').fill('nine topics');
  const nine = Array.from({ length: 9 }, (_, index) => `topic-${index}`);
  await page.locator('input[name="topics"]').fill(nine.join(' '));
  await page.getByRole('button', { name: 'Post' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor({ timeout: 10_000 });
  t.is((await alert.textContent())?.trim(), 'Up to 8 topics: this post has 9.');
  // A field the server refuses is named as the form names it, with what it needs: no "body.value.topics.0".
  await page.locator('input[name="topics"]').fill('Not_A_Slug!');
  await page.getByRole('button', { name: 'Post' }).click();
  await waitUntil('the refused topic', async () => /Topics \(number 1\)/.test((await alert.textContent()) ?? ''), { timeoutMs: 10_000 });
  const refused = (await alert.textContent()) ?? '';
  t.regex(refused, /^Please check this field:Topics \(number 1\): [a-z]/);
  t.notRegex(refused, /body\.|value\./);
  // Eight is allowed: the post goes out, and the earlier message is gone with the form.
  await page.locator('input[name="topics"]').fill(nine.slice(0, 8).join(' '));
  await page.getByRole('button', { name: 'Post' }).click();
  await page.getByRole('heading', { name: 'Posted' }).waitFor({ timeout: 10_000 });
  t.is(await page.getByRole('alert').count(), 0);
  await checkPage(t, page, errors, 'post form');
  await page.close();
});

test.serial('an external artifact with no files: no download command, no empty table, no trust claim, and a mirror request that is sent', async (t) => {
  const { page, errors } = await openPage();
  await page.goto(`${svc.baseUrl}/ui/artifact?id=all-minilm-l6-v2`);
  await page.getByRole('heading', { name: 'all-MiniLM-L6-v2', exact: true }).waitFor({ timeout: 10_000 });
  t.is(await page.getByTestId('download-command').count(), 0, 'no command that would fetch nothing');
  t.false(await page.locator('main table').isVisible(), 'no empty files table');
  t.true(await page.getByText('No files are listed for this artifact.').isVisible(), (await page.locator('main').textContent()) ?? '');
  t.is(await page.getByText('Every subject digest matches').count(), 0, 'no claim about bundles that do not exist');
  t.true(await page.getByText('No trust bundle').isVisible());

  await page.getByLabel('What you would use it for').fill('semantic search over our support tickets');
  await page.getByLabel('The tool that would load it').fill('sentence-transformers');
  await page.getByRole('button', { name: 'Request a mirror' }).click();
  const receipt = await page.getByTestId('mirror-receipt').textContent({ timeout: 10_000 });
  t.regex(receipt ?? '', /^Requested: brr_[A-Za-z0-9_-]{16,64}, \w+\.$/);
  await checkPage(t, page, errors, 'external artifact');
  await page.close();
});

test.serial('a wrong operator token is refused before any session exists; the right one signs in', async (t) => {
  const operatorContext = await browser.newContext({ viewport: WIDE });
  const operatorViolations = await recordCspViolations(operatorContext);
  const page = await operatorContext.newPage();
  try {
    await page.goto(`${svc.baseUrl}/ui/sign-in`);
    await page.getByLabel('Operator token').fill('0123456789abcdef-not-the-token');
    await page.getByRole('button', { name: 'Use the operator token' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor({ timeout: 10_000 });
    t.regex((await alert.textContent()) ?? '', /not the operator token/);
    t.is(await page.getByRole('link', { name: 'Operator' }).count(), 0, 'no operator links in the header');
    t.is(await page.getByText('Sign out').count(), 0, 'no session badge');
    t.is(await page.evaluate(() => sessionStorage.getItem('svc.console.session')), null);
    t.true(page.url().endsWith('/ui/sign-in'));

    await page.getByLabel('Operator token').fill(svc.operatorToken);
    await page.getByRole('button', { name: 'Use the operator token' }).click();
    await page.waitForURL(/\/ui\/operator$/, { timeout: 10_000 });
    await page.getByRole('link', { name: 'Operator' }).waitFor({ timeout: 10_000 });
    t.is(await page.getByRole('alert').count(), 0);
    t.deepEqual(operatorViolations, []);
  } finally {
    await operatorContext.close();
  }
});

test.serial('signed in, billing not configured: the credits page says buying is off and shows no buy button', async (t) => {
  const { page, errors } = await openPage();
  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByRole('button', { name: 'Sign in with svc' }).click();
  await page.getByRole('heading', { name: 'Your keys' }).waitFor({ timeout: 15_000 });
  await page.getByRole('link', { name: 'Credits' }).click();
  await page.getByTestId('spendable').waitFor({ timeout: 10_000 });
  t.regex((await page.getByTestId('billing-off').textContent()) ?? '', /Buying credits is off on this server/);
  t.is(await page.getByRole('button', { name: /credits for/ }).count(), 0, 'no button that can only fail');
  await checkPage(t, page, errors, 'credits, billing off');
  await page.close();
});

test.serial('on a phone, no table splits a word: keys, jobs, credits', async (t) => {
  const { page, errors } = await openPage();
  await page.setViewportSize(NARROW);
  // Signed in by the test before (this context's tab session is per page: sign in again, the same agent).
  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByRole('button', { name: 'Sign in with svc' }).click();
  await page.getByRole('heading', { name: 'Your keys' }).waitFor({ timeout: 15_000 });
  await page.getByLabel('Name').fill('phone key');
  await page.getByLabel('models:read').check();
  await page.getByRole('button', { name: 'Create the key' }).click();
  await page.getByRole('row', { name: /phone key/ }).waitFor({ timeout: 10_000 });
  t.deepEqual(await wordsSplitAcrossLines(page, 'main th, main td button, main td time'), [], 'keys');

  await page.getByRole('link', { name: 'Jobs' }).click();
  t.regex((await page.locator('label', { has: page.locator('textarea[name="expressions"]') }).textContent()) ?? '', /\(required\)/);
  await page.getByRole('button', { name: 'Submit the job' }).click();
  await page.locator('table.jobs tbody tr').first().waitFor({ timeout: 15_000 });
  t.deepEqual(await wordsSplitAcrossLines(page, 'main th, main td button, main td time'), [], 'jobs');

  await page.getByRole('link', { name: 'Credits' }).click();
  await page.getByTestId('spendable').waitFor({ timeout: 10_000 });
  t.deepEqual(await wordsSplitAcrossLines(page, 'main th, main td button, main td time'), [], 'credits');
  await page.setViewportSize(WIDE);
  await checkPage(t, page, errors, 'tables on a phone');
  await page.close();
});
