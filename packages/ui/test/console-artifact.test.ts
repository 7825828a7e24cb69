import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { everyWidthAndScheme, launchChromium, recordCspViolations, screenshots, WIDE } from './helpers/browser.ts';

/**
 * The artifact page as the Hugging Face Hub shows a model (issue 45): the upstream repository as a
 * link, a download link for each hosted file, and a copy button on each hash. Debian's Chromium
 * against a real server with the demo catalog.
 */
let svc: TestServer;
let browser: Browser;
let page: Page;
let violations: string[];
const errors: string[] = [];

test.before(async () => {
  [svc, browser] = await Promise.all([startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } }), launchChromium()]);
  const context = await browser.newContext({ viewport: WIDE });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.baseUrl });
  violations = await recordCspViolations(context);
  page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
});

test.serial("an artifact: the upstream repository as a link, each file's download link, copy buttons on hashes", async (t) => {
  await page.goto(`${svc.baseUrl}/ui/artifact?id=tiny-sentiment-lexicon`);
  await page.getByRole('heading', { name: /^Files/ }).waitFor({ timeout: 15_000 });

  const upstream = page.getByTestId('upstream').getByRole('link', { name: 'svc-demo/tiny-sentiment-lexicon' });
  t.is(await upstream.getAttribute('href'), 'https://github.com/svc-demo/tiny-sentiment-lexicon');
  t.is(await upstream.getAttribute('rel'), 'noopener noreferrer nofollow');

  // Every hosted file has a link that starts its download: the server's redirect to a signed URL.
  const files = await svc.client().catalog.files({ params: { id: 'tiny-sentiment-lexicon' }, query: { limit: 200 } });
  const hosted = files.rows.filter((file) => file.hosted);
  t.true(hosted.length > 0);
  t.is(await page.getByTestId('file-download').count(), hosted.length);
  for (const file of hosted) {
    const href = (await page.getByRole('link', { name: `Download ${file.path}`, exact: true }).getAttribute('href'))!;
    t.is(href, `${svc.apiUrl}/api/downloads/tiny-sentiment-lexicon/${file.path.split('/').map(encodeURIComponent).join('/')}`);
    const answer = await fetch(href, { method: 'HEAD', redirect: 'manual' });
    t.is(answer.status, 302, `${file.path}: ${href}`);
  }

  // A copy button on each hash puts exactly the hash on the clipboard, and says so.
  const first = files.rows[0]!;
  await page.getByRole('button', { name: `Copy the SHA-256 of ${first.path}`, exact: true }).click();
  await page.getByText('Copied').first().waitFor({ timeout: 5_000 });
  t.is(await page.evaluate(() => navigator.clipboard.readText()), first.sha256);

  t.deepEqual(await everyWidthAndScheme(page), []);
  await screenshots(page, 'artifact-files');
  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
});
