import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { createObjectStore, importCatalog } from '@svc/testing/server-internals';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { launchChromium, recordCspViolations, WIDE } from './helpers/browser.ts';

/**
 * Content in the first response (issue 45): the public pages (the board, a channel, a thread, an
 * artifact) are served with the reads their first render makes inlined as a JSON data block, so
 * the first HTML already holds the first post's text and the page shows it without a further
 * request. A post that tries to close the block and run a script stays text; the CSP sees no
 * violation. Debian's Chromium against a real server.
 */
let svc: TestServer;
let browser: Browser;
test.before(async () => {
  [svc, browser] = await Promise.all([startTestServer(), launchChromium()]);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

const HOSTILE = 'First post </script><script>window.ranScript = true</script><!-- <img src=x onerror="window.ranHandler = true"> & done';
const BLOCK = /<script type="application\/json" id="svc-first-load">([^<]*)<\/script>/;

/** The first response's HTML for `path`, as a browser's first request gets it. */
async function firstHtml(path: string): Promise<string> {
  const response = await fetch(`${svc.baseUrl}${path}`, { headers: { accept: 'text/html' } });
  return response.text();
}

/** Opens `path` in a fresh context: the API paths its scripts asked for, its CSP violations and script errors. */
async function openPage(path: string, shown: string): Promise<{ page: Page; requested: string[]; violations: string[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: WIDE });
  const violations = await recordCspViolations(context);
  const page = await context.newPage();
  const requested: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => request.resourceType() === 'fetch' && requested.push(new URL(request.url()).pathname));
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${svc.baseUrl}${path}`);
  await page.getByText(shown, { exact: false }).first().waitFor({ timeout: 15_000 });
  return { page, requested, violations, errors };
}

test.serial("the board's first response holds its first post's text, inert, and the page shows it without reading the API", async (t) => {
  await svc.client().blackboard.put({ body: { key: 'ui:first-load', value: { text: HOSTILE, kind: 'note' } } });
  const html = await firstHtml('/ui/');
  const block = BLOCK.exec(html);
  t.truthy(block, 'a JSON data block follows the app element');
  // The text is in the HTML as JSON, every < > & escaped: nothing in it can end the block or start markup.
  t.false(html.includes('</script><script>window.ranScript'));
  t.false(html.includes('<img src=x'));
  const answers = (JSON.parse(block![1]!) as { answers: Record<string, { items?: { item: { text: string } }[] }> }).answers;
  t.is(answers['GET /api/v1/blackboard/query?limit=20']?.items?.[0]?.item.text, HOSTILE, 'the block gives the exact text back');
  t.deepEqual(Object.keys(answers).sort(), ['GET /', 'GET /api/v1/blackboard/channels?limit=20', 'GET /api/v1/blackboard/query?limit=20']);

  const { page, requested, violations, errors } = await openPage('/ui/', 'First post');
  t.is(await page.locator('section[aria-labelledby=recent-heading] .post-text').first().textContent(), HOSTILE);
  t.deepEqual(requested, [], 'no read of the API: the page rendered the inlined answers');
  t.is(await page.locator('#svc-first-load').count(), 0, 'the block is removed once read');
  t.deepEqual(await page.evaluate(() => [(window as { ranScript?: boolean }).ranScript, (window as { ranHandler?: boolean }).ranHandler]), [
    undefined,
    undefined,
  ]);
  t.deepEqual(violations, []);
  t.deepEqual(errors, []);
  await page.context().close();
});

test.serial('a filtered board, a channel and a thread are inlined too; reads past the first go to the network', async (t) => {
  const client = svc.client();
  const root = await client.blackboard.put({
    body: { key: 'ui:first-thread', value: { text: 'Thread root for the first load', kind: 'ask', topics: ['inline'] } },
  });
  await client.blackboard.put({ body: { key: 'ui:first-thread', value: { text: 'A reply in the first response', kind: 'note', parent_id: root.id } } });

  for (const [path, shown] of [
    ['/ui/?topic=inline', 'Thread root for the first load'],
    ['/ui/channel?key=ui%3Afirst-thread', 'A reply in the first response'],
    [`/ui/item/${root.id}`, 'A reply in the first response'],
  ] as const) {
    t.true((await firstHtml(path)).includes(shown), `${path}: the first response holds the text`);
    const { page, requested, violations, errors } = await openPage(path, shown);
    // The channel page goes on to follow its push stream; nothing else is read.
    t.deepEqual(
      requested.filter((requestedPath) => requestedPath !== '/api/v1/blackboard/watch'),
      [],
      path,
    );
    t.deepEqual(violations, [], path);
    t.deepEqual(errors, [], path);
    await page.context().close();
  }

  // A page reached inside the app has no inlined answer: it reads as before.
  const { page, requested } = await openPage('/ui/', 'Thread root for the first load');
  await page.getByRole('link', { name: 'ui:first-thread' }).first().click();
  await page.getByText('A reply in the first response').first().waitFor({ timeout: 15_000 });
  t.true(requested.includes('/api/v1/blackboard/get'));
  await page.context().close();
});

test.serial("the artifact page's first response holds its model card's text, and the page renders it without reading the API", async (t) => {
  await importCatalog({ sequelize: svc.server.deps.database.sequelize, store: await createObjectStore(svc.server.deps) }, [
    {
      line: 1,
      value: {
        kind: 'artifact',
        id: 'first-load-card',
        name: 'First load card',
        type: 'model',
        license: 'mit',
        hosting: 'external',
        source: 'upload',
        readme: '# Inlined card\n\nScores **0.93** on the held-out set.',
      },
    },
  ]);
  const html = await firstHtml('/ui/artifact?id=first-load-card');
  t.true(html.includes('Scores **0.93** on the held-out set.'));
  // The page's own chunk (lazy in the app) is preloaded from the first HTML, not asked for once the first script has run.
  t.regex(html.slice(0, html.indexOf('</head>')), /<link rel="modulepreload" crossorigin href="\/ui\/assets\/artifact-[\w-]+\.js">/);
  t.notRegex(await firstHtml('/ui/'), /assets\/artifact-/, 'the board does not preload it');
  const { page, requested, violations, errors } = await openPage('/ui/artifact?id=first-load-card', 'Scores');
  t.is(await page.getByTestId('model-card').locator('strong').textContent(), '0.93');
  t.deepEqual(requested, []);
  t.deepEqual(violations, []);
  t.deepEqual(errors, []);
  await page.context().close();
});

test('pages that are not public carry no data block, and an API that refuses a read leaves it out', async (t) => {
  for (const path of ['/ui/catalog', '/ui/keys', '/ui/operator/usage', '/ui/channel']) t.notRegex(await firstHtml(path), BLOCK, path);
  const missing = BLOCK.exec(await firstHtml('/ui/item/bb_000000000000000000000000'));
  // The root document is inlined; the post that does not exist is not (the page reads it and shows the 404 as before).
  t.deepEqual(
    Object.keys((JSON.parse(missing![1]!) as { answers: Record<string, unknown> }).answers).filter((key) => key.startsWith('GET /api/v1/blackboard/bb_')),
    [],
  );
});
