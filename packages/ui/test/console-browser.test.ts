import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { launchChromium, overflowAt360, recordCspViolations, screenshots, seriousAxeViolations } from './helpers/browser.ts';

/**
 * Each journey of the console in Debian's Chromium against a real server on the embedded
 * database (or PostgreSQL with TEST_DATABASE_URL): one browser for the file, one page per test,
 * axe-core on every page, and the screenshots docs/ui.md shows.
 */
let svc: TestServer;
let browser: Browser;
test.before(async () => {
  [svc, browser] = await Promise.all([startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } }), launchChromium()]);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

/** A fresh page whose script errors and CSP violations fail the test that reads them. */
async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const errors: string[] = [];
  await recordCspViolations(page, errors);
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
  return { page, errors };
}

async function checkPage(t: import('ava').ExecutionContext, page: Page, name: string) {
  t.deepEqual(await seriousAxeViolations(page), [], `${name}: axe found serious or critical violations`);
  t.is(await overflowAt360(page), 0, `${name}: nothing scrolls sideways at 360 px`);
  await screenshots(page, name);
}

test.serial('browse the board, a channel with live updates, and a thread', async (t) => {
  const client = svc.client();
  const root = await client.blackboard.put({
    body: { key: 'ui:board', value: { text: 'Which reranker works offline?', kind: 'ask', task: 'rerank', topics: ['seek'] } },
  });
  await client.blackboard.put({ body: { key: 'ui:board', value: { text: 'The hashed n-gram one does.', kind: 'result', parent_id: root.id } } });
  await client.blackboard.put({ body: { key: 'ui:other', value: { text: 'An unrelated note', kind: 'note' } } });
  const { page, errors } = await openPage();

  await page.goto(`${svc.baseUrl}/ui/`);
  await page.getByRole('link', { name: 'ui:board' }).first().waitFor();
  t.true(await page.getByText('Which reranker works offline?').first().isVisible());
  await checkPage(t, page, 'board');

  // Filters live in the address: kind=ask leaves the channel with an ask and drops the other.
  await page.getByLabel('Kind').selectOption('ask');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/\?kind=ask/);
  await waitUntil('the filtered board', async () => (await page.locator('.channel-list .channel').count()) === 1, { timeoutMs: 10_000 });
  t.is(await page.locator('.channel-list .channel-key').textContent(), 'ui:board');

  await page.getByRole('link', { name: 'ui:board' }).first().click();
  await page.waitForURL(/\/ui\/channel\?key=ui%3Aboard/);
  await page.getByText('The hashed n-gram one does.').waitFor();
  // The push stream has started (watch-started) before the post is made.
  await page.locator('[data-live=live]').waitFor({ timeout: 10_000 });
  await client.blackboard.put({ body: { key: 'ui:board', value: { text: 'Arrived while the page was open' } } });
  await page.getByText('Arrived while the page was open').waitFor({ timeout: 15_000 });
  await checkPage(t, page, 'channel');

  await page.goto(`${svc.baseUrl}/ui/item/${root.id}`);
  await page.getByRole('heading', { name: 'Replies (1)' }).waitFor();
  t.true(await page.locator('.thread').getByText('The hashed n-gram one does.').isVisible());
  await checkPage(t, page, 'item');
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('keyboard: a skip link first, then the header in order; a navigation moves focus to the new page heading', async (t) => {
  const { page, errors } = await openPage();
  await page.goto(`${svc.baseUrl}/ui/`);
  await page.getByRole('heading', { name: 'Active channels' }).waitFor({ timeout: 10_000 });
  const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim());
  const order: Array<string | undefined> = [];
  for (let step = 0; step < 6; step++) {
    await page.keyboard.press('Tab');
    order.push(await focused());
  }
  t.deepEqual(order, ['Skip to content', 'svc', 'Board', 'Post', 'Catalog', 'Rankings']);
  // Enter on a link navigates in the page; focus lands on the new page's heading, not at the top of the document.
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Rankings and trending' }).waitFor({ timeout: 10_000 });
  await waitUntil('focus on the heading', async () => (await focused()) === 'Rankings and trending');
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('post, see the edit token once, then retract with it', async (t) => {
  const { page, errors } = await openPage();
  await page.goto(`${svc.baseUrl}/ui/post?key=ui%3Aposting`);
  await page.getByLabel('Text').fill('Posted from the console');
  await page.getByLabel('Kind').selectOption('note');
  await page.getByLabel(/^Topics/).fill('found, hold');
  await checkPage(t, page, 'post-form');
  await page.getByRole('button', { name: 'Post' }).click();
  const token = await page.getByTestId('edit-token').textContent({ timeout: 10_000 });
  t.truthy(token);
  const id = (await page.locator('p[role=status] a').first().textContent())!;
  const stored = await svc.client().blackboard.show({ params: { id } });
  t.is(stored.item.text, 'Posted from the console');
  t.deepEqual(stored.item.topics, ['found', 'hold']);
  // The token is in the page and nowhere a later visitor or another tab could read it.
  t.false(page.url().includes(token!));
  t.deepEqual(await page.evaluate(() => [localStorage.length, JSON.stringify({ ...sessionStorage })]), [0, '{}']);
  await checkPage(t, page, 'post-token');

  await page.getByRole('button', { name: 'Retract' }).click();
  await page.getByText('Retracted: the post is hidden on the board.').waitFor({ timeout: 10_000 });
  const gone = await svc
    .client()
    .blackboard.show({ params: { id } })
    .catch((error: { status: number }) => error.status);
  t.is(gone, 404);
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('hostile posts render as inert text under a strict CSP', async (t) => {
  const client = svc.client();
  const key = 'ui:hostile';
  const hostile = [
    '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">',
    'javascript:window.__pwned=3',
    'data:text/html,<script>window.__pwned=4</script>',
    '&lt;b&gt;not bold&lt;/b&gt; &amp; &#x3C;i&#x3E;',
    `right\u202Eto-left override and zero\u200Bwidth\u200Dchars\u2066`,
    'x'.repeat(16_000),
  ];
  for (const text of hostile) {
    await client.blackboard.put({
      body: {
        key,
        value: {
          text,
          // Extra fields are kept verbatim, keys included: bidi overrides and zero-width characters there too.
          '\u202Eevil\u200Bkey': '<svg onload="window.__pwned=5">',
          homepage: 'javascript:window.__pwned=6',
          next_call: { op: 'put', href: 'javascript:window.__pwned=7', html: '<iframe src="data:text/html,x"></iframe>' },
          receipt: { jws: '<script>window.__pwned=8</script>' },
        },
      },
    });
  }
  // 200 topics' worth of slugs: 25 posts of the 8 allowed, each 48 characters long.
  for (let post = 0; post < 25; post++) {
    const topics = Array.from({ length: 8 }, (_, index) => `t${String(post * 8 + index).padStart(3, '0')}-${'a'.repeat(43)}`);
    await client.blackboard.put({ body: { key, value: { text: `topics ${post}`, topics } } });
  }
  const { page, errors } = await openPage();
  const refused: string[] = [];
  page.on('console', (message) => /Content Security Policy/i.test(message.text()) && refused.push(message.text()));
  const response = await page.goto(`${svc.baseUrl}/ui/channel?key=${encodeURIComponent(key)}`);
  const policy = response!.headers()['content-security-policy'] ?? '';
  t.regex(policy, /script-src 'self'/);
  t.regex(policy, /frame-ancestors 'none'/);
  t.notRegex(policy, /unsafe-inline|unsafe-eval/);
  await page.getByText('topics 24').waitFor({ timeout: 10_000 });
  await page.locator('details.inert').first().waitFor();
  // Open every inert block, so what is in them is in the DOM and laid out too.
  await page.evaluate(() => {
    for (const details of document.querySelectorAll('details')) details.open = true;
  });

  const dom = await page.evaluate(() => {
    const main = document.querySelector('main')!;
    return {
      pwned: (globalThis as { __pwned?: unknown }).__pwned,
      scripts: [...document.scripts].map((script) => script.getAttribute('src')),
      // Elements a post could only have produced by being parsed as markup.
      injected: main.querySelectorAll('script, img, svg, iframe, object, embed, style, b, i, form[action], [onerror], [onload]').length,
      links: [...main.querySelectorAll('a')].map((link) => ({ href: link.getAttribute('href')!, rel: link.getAttribute('rel') })),
      texts: [...main.querySelectorAll('.post-text')].map((element) => element.textContent),
      mainText: main.textContent ?? '',
    };
  });
  t.is(dom.pwned, undefined, 'no injected script ran');
  t.is(dom.scripts.length, 1);
  t.regex(dom.scripts[0]!, /^\/ui\/assets\/index-[\w-]+\.js$/);
  t.is(dom.injected, 0);
  for (const link of dom.links)
    t.true(link.href.startsWith('/ui/') || (link.href.startsWith('https:') && link.rel === 'noopener noreferrer nofollow'), link.href);
  // Verbatim, except that each hidden or bidirectional character is shown by its code point where it is.
  const marked = (text: string) =>
    text.replace(/[\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/g, (character) => `U+${character.codePointAt(0)!.toString(16).toUpperCase()}`);
  t.is(marked(hostile[4]!), 'rightU+202Eto-left override and zeroU+200BwidthU+200DcharsU+2066');
  for (const text of hostile) t.true(dom.texts.includes(marked(text)), `shown verbatim as text: ${text.slice(0, 40)}`);
  t.true(dom.mainText.includes('javascript:window.__pwned=7'), 'next_call is shown as inert data');
  t.true(dom.mainText.includes('\u202Eevil\u200Bkey'));
  t.deepEqual(refused, [], 'nothing even tried to run against the CSP');
  t.is(await overflowAt360(page), 0, 'a 16,000-character word and 200 topics do not widen the page');
  t.deepEqual(await seriousAxeViolations(page), []);
  await screenshots(page, 'hostile');
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('search the catalog with facets, explain and the semantic switch, then open an artifact', async (t) => {
  const { page, errors } = await openPage();
  await page.goto(`${svc.baseUrl}/ui/catalog`);
  await page.getByRole('heading', { name: /5 artifacts/ }).waitFor({ timeout: 10_000 });
  // Facet counts over every match are in the filter options.
  t.regex((await page.getByLabel('Type').locator('option[value=model]').textContent()) ?? '', /^model \(\d+\)$/);
  await checkPage(t, page, 'catalog');

  await page.getByRole('searchbox', { name: 'Search' }).fill('sentiment');
  await page.getByLabel('Explain the ranking').check();
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/q=sentiment/);
  await page.locator('.explain').first().waitFor();
  t.is(await page.locator('.results .artifact-name').first().getAttribute('href'), '/ui/artifact?id=tiny-sentiment-lexicon');
  t.regex((await page.locator('.explain').first().textContent()) ?? '', /^fulltext/);

  await page.getByLabel('Semantic (meaning, not words)').check();
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('heading', { name: /semantic/ }).waitFor({ timeout: 10_000 });

  await page.locator('.results .artifact-name').first().click();
  await page.getByRole('heading', { name: 'Files', exact: false }).waitFor({ timeout: 10_000 });
  const command = await page.getByTestId('download-command').textContent();
  t.is(command, `SVC_API_URL=${svc.apiUrl} svc download ${new URL(page.url()).searchParams.get('id')}`);
  const hashes = await page.locator('code.hash').allTextContents();
  t.true(hashes.length > 0);
  for (const hash of hashes) t.regex(hash, /^[0-9a-f]{64}$/);
  await checkPage(t, page, 'artifact');

  await page.goto(`${svc.baseUrl}/ui/rankings?slug=top-rated&window=30d`);
  await page.getByRole('heading', { name: 'Trending (30d)' }).waitFor({ timeout: 10_000 });
  await checkPage(t, page, 'rankings');
  t.deepEqual(errors, []);
  await page.close();
});

test.serial('with SVC_API_PORT the console calls the api surface on its own origin, allowed by CORS without configuration', async (t) => {
  const split = await startTestServer({ env: { SVC_API_PORT: '0' } });
  try {
    t.not(new URL(split.apiUrl).origin, new URL(split.baseUrl).origin);
    await split.client().blackboard.put({ body: { key: 'ui:split', value: { text: 'across origins' } } });
    const { page, errors } = await openPage();
    const apiCalls: string[] = [];
    page.on('request', (request) => request.url().startsWith(split.apiUrl) && apiCalls.push(request.url()));
    await page.goto(`${split.baseUrl}/ui/`);
    await page.getByText('across origins').first().waitFor({ timeout: 10_000 });
    // The board's first reads came inside the page (first-load); a channel opened from it is read from the api surface.
    await page.locator('.channel-list a.channel-key', { hasText: 'ui:split' }).click();
    await page.locator('.post-text', { hasText: 'across origins' }).waitFor({ timeout: 10_000 });
    t.true(apiCalls.some((url) => url.includes('/api/v1/blackboard/get')));
    t.deepEqual(errors, []);
    await page.close();
  } finally {
    await split.close();
  }
});
