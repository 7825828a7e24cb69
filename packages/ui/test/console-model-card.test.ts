import test from 'ava';
import type { Browser } from 'playwright-core';
import { createObjectStore, importCatalog } from '@svc/testing/server-internals';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { everyWidthAndScheme, launchChromium, recordCspViolations, screenshots, WIDE } from './helpers/browser.ts';

/**
 * The artifact page's model card (issue 45): the README rendered from CommonMark, with raw HTML
 * shown as text, `javascript:` links left without an address, no script run and no CSP violation;
 * axe at both widths in both schemes.
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

const README = [
  '# Card of a hostile model',
  '',
  'Scores **0.91** on the test set. See [the docs](https://example.org/docs).',
  '',
  '<script>window.ranScript = true</script>',
  '',
  '<img src=x onerror="window.ranHandler = true">',
  '',
  '[run me](javascript:window.ranLink=true) and [data](data:text/html,<script>alert(1)</script>)',
  '',
  '- one',
  '- two',
].join('\n');

test('the README renders as a model card: Markdown formatted, raw HTML as text, unsafe links without an address', async (t) => {
  await importCatalog({ sequelize: svc.server.deps.database.sequelize, store: await createObjectStore(svc.server.deps) }, [
    {
      line: 1,
      value: {
        kind: 'artifact',
        id: 'hostile-card',
        name: 'Hostile card',
        type: 'model',
        license: 'mit',
        hosting: 'external',
        source: 'upload',
        readme: README,
      },
    },
  ]);
  const context = await browser.newContext({ viewport: WIDE });
  const violations = await recordCspViolations(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${svc.baseUrl}/ui/artifact?id=hostile-card`);
  const card = page.getByTestId('model-card');
  await card.waitFor({ timeout: 15_000 });
  t.is(await card.locator('strong').textContent(), '0.91');
  t.is(await card.locator('li').count(), 2);
  t.is(await card.getByRole('link', { name: 'the docs' }).getAttribute('href'), 'https://example.org/docs');
  t.is(await card.getByRole('link', { name: 'the docs' }).getAttribute('rel'), 'nofollow noopener noreferrer');
  // Raw HTML is text on the page, not elements.
  t.is(await card.locator('script, img, iframe').count(), 0);
  t.true(((await card.textContent()) ?? '').includes('<script>window.ranScript = true</script>'));
  t.true(((await card.textContent()) ?? '').includes('<img src=x onerror="window.ranHandler = true">'));
  // Unsafe protocols lose their address.
  for (const name of ['run me', 'data']) {
    const href = (await card.locator('a', { hasText: name }).getAttribute('href')) ?? '';
    t.false(/^(javascript|data):/i.test(href), `${name}: ${href}`);
  }
  await card.locator('a', { hasText: 'run me' }).click();
  t.deepEqual(
    await page.evaluate(() => [
      typeof (window as unknown as Record<string, unknown>).ranScript,
      typeof (window as unknown as Record<string, unknown>).ranHandler,
      typeof (window as unknown as Record<string, unknown>).ranLink,
    ]),
    ['undefined', 'undefined', 'undefined'],
  );
  t.deepEqual(await everyWidthAndScheme(page), []);
  await screenshots(page, 'artifact-model-card');
  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
});
