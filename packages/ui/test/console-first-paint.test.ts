import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { createObjectStore, importCatalog } from '@svc/testing/server-internals';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { everyWidthAndScheme, launchChromium, recordCspViolations, WIDE } from './helpers/browser.ts';

/**
 * Content in the first paint (issue 45): the public pages (the board, a channel, a thread, an
 * artifact's model card) are drawn by the server into the first response with the app's own
 * components, so they are read with JavaScript off. Hostile text stays text and its hidden
 * characters are marked there as the app marks them; axe finds nothing; with JavaScript on, the
 * app takes the page over and the first paint is gone. Debian's Chromium against a real server.
 */
let svc: TestServer;
let browser: Browser;
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

// An RTL override (reads "invoicetxt.exe" unmarked), a zero-width space, and markup that must stay text.
const SPOOF = 'Pay invoice\u202Eexe.txt now\u200B <img src=x onerror="document.title=\'ran\'"><script>document.title="ran"</script>';
const README =
  '# First paint card\n\nScores **0.95** on the held-out set. [docs](https://example.org/docs)\n\n<img src=x onerror="document.title=\'ran\'">\n\n[bad](javascript:alert(1))';

let rootId = '';
test.before(async () => {
  // A deadline a loaded machine meets (the default 200 ms is for a quiet one): these tests are about what is drawn.
  [svc, browser] = await Promise.all([startTestServer({ env: { SVC_UI_FIRST_PAINT_MS: '10000' } }), launchChromium()]);
  const client = svc.client();
  const root = await client.blackboard.put({ body: { key: 'ui:first-paint', value: { text: SPOOF, kind: 'ask', topics: ['paint'] } } });
  rootId = root.id;
  await client.blackboard.put({ body: { key: 'ui:first-paint', value: { text: 'A reply drawn by the server', kind: 'note', parent_id: root.id } } });
  await importCatalog({ sequelize: svc.server.deps.database.sequelize, store: await createObjectStore(svc.server.deps) }, [
    {
      line: 1,
      value: {
        kind: 'artifact',
        id: 'first-paint-card',
        name: 'First paint card',
        type: 'model',
        license: 'mit',
        hosting: 'external',
        source: 'upload',
        readme: README,
      },
    },
  ]);
});

/** What a hostile post or card must never become in the page: an element it wrote. */
const injected = (page: Page) => page.locator('main img, main script, #first-paint img, #first-paint script').count();

/**
 * axe at both widths in both schemes on the page as a browser without scripts draws it. axe is a
 * script, and in a context with JavaScript off its run never settles (its timers never fire), so
 * it runs where the page's own scripts are refused instead: the same HTML, none of the app.
 */
async function axeWithoutScripts(path: string): Promise<string[]> {
  const context = await browser.newContext({ viewport: WIDE });
  await context.route('**/ui/assets/*.js', (route) => route.abort());
  const page = await context.newPage();
  await page.goto(`${svc.baseUrl}${path}`);
  const failures = (await page.locator('#first-paint').count()) === 1 ? await everyWidthAndScheme(page) : ['no first paint'];
  await context.close();
  return failures;
}

test.serial('with JavaScript off, the public pages show their posts and model card, marked and inert, and axe finds nothing', async (t) => {
  const context = await browser.newContext({ viewport: WIDE, javaScriptEnabled: false });
  const page = await context.newPage();
  for (const [path, shown] of [
    ['/ui/', 'Pay invoice'],
    ['/ui/channel?key=ui%3Afirst-paint', 'Pay invoice'],
    [`/ui/item/${rootId}`, 'A reply drawn by the server'],
  ] as const) {
    await page.goto(`${svc.baseUrl}${path}`);
    t.true(await page.getByText(shown).first().isVisible(), `${path}: the post is on screen`);
    t.false(await page.getByText('svc console: loading…').isVisible(), `${path}: the first paint replaces the loading line`);
    const text = page.locator('#first-paint .post-text', { hasText: 'Pay invoice' }).first();
    // The override and the zero-width space are shown as labelled marks, and the markup as text.
    t.deepEqual(await text.locator('.hidden-char').allTextContents(), ['U+202E', 'U+200B'], path);
    t.true((await text.textContent())!.includes('<script>document.title="ran"</script>'), path);
    t.true(await page.locator('#first-paint .hidden-warning').first().isVisible(), path);
    t.is(await injected(page), 0, path);
    t.is(await page.title(), 'svc console', `${path}: nothing ran`);
    t.deepEqual(await axeWithoutScripts(path), [], path);
  }
  t.true(await page.getByText('A reply drawn by the server').isVisible(), 'the thread shows its reply');

  await page.goto(`${svc.baseUrl}/ui/artifact?id=first-paint-card`);
  const card = page.getByTestId('model-card');
  t.true(await card.isVisible());
  t.is(await card.locator('strong').textContent(), '0.95');
  t.is(await card.getByRole('link', { name: 'docs' }).getAttribute('rel'), 'nofollow noopener noreferrer');
  t.is(await card.getByRole('link', { name: 'bad' }).getAttribute('href'), '', 'a javascript: link has no address');
  t.true((await card.textContent())!.includes('<img src=x'), 'raw HTML is text');
  t.is(await injected(page), 0);
  t.deepEqual(await axeWithoutScripts('/ui/artifact?id=first-paint-card'), []);
  await context.close();
});

test.serial('the first HTML holds the drawn post, and with JavaScript on the app takes the page over: one copy, no error, no CSP violation', async (t) => {
  const html = await (await fetch(`${svc.baseUrl}/ui/channel?key=ui%3Afirst-paint`, { headers: { accept: 'text/html' } })).text();
  t.regex(html, /<div id="first-paint">/);
  t.true(html.includes('<span class="hidden-char" title="RIGHT-TO-LEFT OVERRIDE">U+202E</span>'), 'marked on the server');
  t.false(html.includes('<img src=x'), 'the markup is escaped in the HTML');
  // No inline script came with it: the CSP is the same.
  t.is(html.match(/<script(?![^>]*type="application\/json")[^>]*>/g)?.length, 1, 'one script: the module the page loads from /ui/assets/');

  for (const path of ['/ui/', '/ui/channel?key=ui%3Afirst-paint', `/ui/item/${rootId}`, '/ui/artifact?id=first-paint-card']) {
    const context = await browser.newContext({ viewport: WIDE });
    const violations = await recordCspViolations(context);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const scripts: string[] = [];
    page.on('request', (request) => void (request.resourceType() === 'script' && scripts.push(request.url())));
    await page.goto(`${svc.baseUrl}${path}`);
    await page.locator('#first-paint').waitFor({ state: 'detached', timeout: 15_000 });
    t.is(await page.locator('#app main > h1').count(), 1, `${path}: the app draws the page`);
    if (path.includes('artifact')) {
      // The app takes the server's card over as it is drawn: micromark's chunk is not loaded.
      t.is(await page.getByTestId('model-card').count(), 1, path);
      t.is(await page.getByTestId('model-card').locator('strong').textContent(), '0.95', path);
      t.deepEqual(
        scripts.filter((url) => url.includes('model-card-html')),
        [],
        path,
      );
    } else t.is(await page.locator('.post-text', { hasText: 'Pay invoice' }).count(), 1, `${path}: the post once`);
    t.is(await page.title().then((title) => title.includes('ran')), false, path);
    t.deepEqual(violations, [], path);
    t.deepEqual(errors, [], path);
    await context.close();
  }
});

test('pages that are not public, and a post that does not exist, get no first paint: their loading line stays', async (t) => {
  for (const path of ['/ui/catalog', '/ui/keys', '/ui/post', '/ui/item/bb_000000000000000000000000']) {
    const html = await (await fetch(`${svc.baseUrl}${path}`, { headers: { accept: 'text/html' } })).text();
    t.false(html.includes('id="first-paint"'), path);
    t.true(html.includes('id="boot"'), path);
  }
});

test('a page past the first paint budget is served without one, and its data block still comes', async (t) => {
  // 8,200 zero-width spaces: each would be a marker element, past the 8,192 the server draws.
  await svc.client().blackboard.put({ body: { key: 'ui:first-paint-budget', value: { text: `Many marks ${'\u200B'.repeat(8200)}`, kind: 'note' } } });
  const html = await (await fetch(`${svc.baseUrl}/ui/channel?key=ui%3Afirst-paint-budget`, { headers: { accept: 'text/html' } })).text();
  t.false(html.includes('id="first-paint"'));
  t.true(html.includes('id="boot"'));
  t.regex(html, /id="svc-first-load"/);
});

test('a page not drawn within the deadline is served without a first paint, and the app shows every post and the model card from its data block', async (t) => {
  // A deadline no drawing meets: every page is past it, as a slow drawing is past 200 ms.
  const late = await startTestServer({ env: { SVC_UI_FIRST_PAINT_MS: '1' } });
  t.teardown(() => late.close());
  const texts = Array.from({ length: 30 }, (_, index) => `Late post ${index + 1}.`);
  for (const text of texts) await late.client().blackboard.put({ body: { key: 'ui:late', value: { text, kind: 'note' } } });
  const html = await (await fetch(`${late.baseUrl}/ui/channel?key=ui%3Alate`, { headers: { accept: 'text/html' } })).text();
  t.false(html.includes('id="first-paint"'));
  t.regex(html, /id="svc-first-load"/);

  const context = await browser.newContext({ viewport: WIDE });
  const violations = await recordCspViolations(context);
  const page = await context.newPage();
  await page.goto(`${late.baseUrl}/ui/channel?key=ui%3Alate`);
  await page.locator('.post-text', { hasText: 'Late post 1.' }).waitFor();
  t.deepEqual((await page.locator('.post-text').allTextContents()).sort(), [...texts].sort());

  // With no card drawn by the server, the app loads micromark's chunk and draws the card itself.
  await importCatalog({ sequelize: late.server.deps.database.sequelize, store: await createObjectStore(late.server.deps) }, [
    {
      line: 1,
      value: { kind: 'artifact', id: 'late-card', name: 'Late card', type: 'model', license: 'mit', hosting: 'external', source: 'upload', readme: README },
    },
  ]);
  const micromarkLoaded = page.waitForRequest((request) => request.url().includes('model-card-html'));
  await page.goto(`${late.baseUrl}/ui/artifact?id=late-card`);
  await micromarkLoaded;
  t.is(await page.getByTestId('model-card').locator('strong').textContent(), '0.95');
  t.is(await page.getByTestId('model-card').getByRole('link', { name: 'bad' }).getAttribute('href'), '');
  t.deepEqual(violations, []);
  await context.close();
});
