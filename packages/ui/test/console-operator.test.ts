import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { CACHE_OPT_IN_HEADER } from '@svc/schemas';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { everyWidthAndScheme, launchChromium, recordCspViolations, screenshots, WIDE } from './helpers/browser.ts';

/**
 * The operator's pages (issue 45) in Debian's Chromium against a real server over a fake
 * OpenAI-compatible upstream (the third party, in its wire format): each deployment's health,
 * the response cache with its purge, and the traffic as bars with readable route names.
 */
let fake: FakeUpstream;
let svc: TestServer;
let browser: Browser;
let page: Page;
let violations: string[];
const errors: string[] = [];

test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  [svc, browser] = await Promise.all([
    startTestServer({
      env: { SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_API_KEY: 'sk-upstream-for-the-console', SVC_UPSTREAM_MODELS: 'answer-a,broken-b' },
    }),
    launchChromium(),
  ]);
  const context = await browser.newContext({ viewport: WIDE });
  violations = await recordCspViolations(context);
  page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  await fake?.close();
});

test.serial('the operator sees each deployment, the response cache and the traffic, and purges the cache after confirming', async (t) => {
  // OpenAI's wire format, as any OpenAI client sends it (this package has no OpenAI SDK of its own).
  const chat = (model: string) =>
    fetch(`${svc.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}`, [CACHE_OPT_IN_HEADER]: 'true' },
      body: JSON.stringify({ model, temperature: 0, messages: [{ role: 'user', content: 'hello' }] }),
    }).then((answer) => answer.status);
  // The same deterministic call twice: stored, then served from the cache.
  t.is(await chat('answer-a'), 200);
  t.is(await chat('answer-a'), 200);
  t.true((await chat('broken-b')) >= 500);

  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByLabel('Operator token').fill(svc.operatorToken);
  await page.getByRole('button', { name: 'Use the operator token' }).click();
  await page.getByTestId('deployments').waitFor({ timeout: 15_000 });

  // Deployments: the failing one says so, in words and as a rate.
  const rowOf = (model: string) => page.getByTestId('deployments').locator('tr', { hasText: model });
  t.is(await rowOf('answer-a').getByTestId('deployment-state').textContent(), 'healthy');
  t.regex((await rowOf('answer-a').getByTestId('deployment-error-rate').textContent()) ?? '', /^0% of the last 1$/);
  t.regex((await rowOf('broken-b').getByTestId('deployment-error-rate').textContent()) ?? '', /^100% of the last \d+$/);

  // The response cache: one stored answer, one hit.
  t.is(await page.getByTestId('cache-entries').textContent(), '1');
  // One hit; two misses (the first answer-a call, and broken-b's, which found nothing to serve).
  t.regex((await page.getByTestId('cache-hits').textContent()) ?? '', /^1 \/ 2 \(33% hits/);

  // Traffic: methods and paths, not contract keys; the console's own files are not among them.
  const routes = (await page.getByTestId('route-traffic').locator('tbody th').allTextContents()).map((text) => text.trim());
  t.true(routes.length > 0);
  for (const route of routes) t.regex(route, /^(GET|POST|PUT|PATCH|DELETE) \//, route);
  t.false(
    routes.some((route) => route.includes('console')),
    routes.join('\n'),
  );
  t.true(routes.includes('POST /v1/chat/completions'), routes.join('\n'));
  const models = await page.getByTestId('model-traffic').locator('tbody th').allTextContents();
  t.true(models.includes('answer-a'), models.join(', '));

  t.deepEqual(await everyWidthAndScheme(page), []);
  await screenshots(page, 'operator-overview');

  // Purge asks first; Cancel keeps the answers.
  await page.getByRole('button', { name: 'Purge the response cache' }).click();
  t.true(await page.getByRole('button', { name: 'Cancel' }).evaluate((element) => element === document.activeElement), 'the focus is on Cancel');
  await page.getByRole('button', { name: 'Cancel' }).click();
  t.is((await svc.client({ token: svc.operatorToken }).models.cache()).caches.find((cache) => cache.name === 'response-cache')?.entries, 1);
  await page.getByRole('button', { name: 'Purge the response cache' }).click();
  await page.getByRole('button', { name: 'Yes, purge' }).click();
  t.regex((await page.getByTestId('cache-purged').textContent({ timeout: 10_000 })) ?? '', /^Purged 1 stored answer \(\d+(\.\d)? (bytes|KiB)\)\.$/);
  await waitUntil('the page to show the emptied cache', async () => (await page.getByTestId('cache-entries').textContent()) === '0', { timeoutMs: 10_000 });
  t.is((await svc.client({ token: svc.operatorToken }).models.cache()).caches.find((cache) => cache.name === 'response-cache')?.entries, 0);
  t.deepEqual(await everyWidthAndScheme(page), []);

  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
});

test.serial("a key's limits are edited in place, and the keys are found by search", async (t) => {
  const context = await browser.newContext({ viewport: WIDE });
  const keyViolations = await recordCspViolations(context);
  const keyPage = await context.newPage();
  const keyErrors: string[] = [];
  keyPage.on('pageerror', (error) => keyErrors.push(error.message));
  try {
    await keyPage.goto(`${svc.baseUrl}/ui/sign-in`);
    await keyPage.getByRole('button', { name: 'Sign in with svc' }).click();
    await keyPage.getByRole('heading', { name: 'Developer keys' }).waitFor({ timeout: 15_000 });
    for (const name of ['build bot', 'nightly eval']) {
      await keyPage.getByLabel('Name').fill(name);
      await keyPage.getByLabel('models:read').check();
      await keyPage.getByLabel('requests per minute').fill('30');
      await keyPage.getByRole('button', { name: 'Create the key' }).click();
      await keyPage.getByRole('cell', { name, exact: true }).waitFor({ timeout: 10_000 });
    }
    const token = await keyPage.evaluate(() => (JSON.parse(sessionStorage.getItem('svc.console.session') ?? '{}') as { accessToken: string }).accessToken);
    const limitsOf = async (name: string) => (await svc.client({ token }).credentials.list()).data.find((key) => key.name === name)!.limits;

    // Search narrows the table as one types.
    await keyPage.getByLabel('Search keys').fill('nightly');
    await waitUntil('one key left', async () => (await keyPage.locator('tbody tr').count()) === 1, { timeoutMs: 5_000 });
    t.is(await keyPage.locator('tbody tr td').first().textContent(), 'nightly eval');
    await keyPage.getByLabel('Search keys').fill('');

    // Edit in place: one limit changed, one cleared to the default, the others untouched.
    await keyPage.getByRole('button', { name: 'Edit the limits of build bot' }).click();
    const editor = keyPage.getByRole('form', { name: 'Limits of build bot' });
    t.true(await editor.getByLabel('requests per minute').evaluate((element) => element === document.activeElement), 'the first limit has the focus');
    t.is(await editor.getByLabel('requests per minute').inputValue(), '30');
    await editor.getByLabel('tokens per minute').fill('5000');
    await editor.getByLabel('requests per minute').fill('');
    await editor.getByRole('button', { name: 'Save the limits' }).click();
    await waitUntil(
      'the saved limits in the row',
      async () =>
        /tokens per minute 5000/.test(
          (await keyPage
            .getByRole('row', { name: /build bot/ })
            .getByTestId('key-limits')
            .textContent()) ?? '',
        ),
      {
        timeoutMs: 10_000,
      },
    );
    t.like(await limitsOf('build bot'), { requests_per_minute: null, tokens_per_minute: 5000 });
    t.like(await limitsOf('nightly eval'), { requests_per_minute: 30, tokens_per_minute: null });

    // A limit past its maximum is refused by the form before anything is sent; the maximum itself is taken.
    await keyPage.getByRole('button', { name: 'Edit the limits of build bot' }).click();
    const concurrent = keyPage.getByRole('form', { name: 'Limits of build bot' }).getByLabel('concurrent requests');
    const overflows = () => concurrent.evaluate((input: HTMLInputElement) => input.validity.rangeOverflow);
    await concurrent.fill('10001');
    t.true(await overflows());
    t.deepEqual(await everyWidthAndScheme(keyPage), []);
    await keyPage.getByRole('form', { name: 'Limits of build bot' }).getByRole('button', { name: 'Save the limits' }).click();
    t.like(await limitsOf('build bot'), { concurrent_requests: null });
    await concurrent.fill('10000');
    t.false(await overflows());
    await keyPage.getByRole('form', { name: 'Limits of build bot' }).getByRole('button', { name: 'Save the limits' }).click();
    await waitUntil('the maximum saved', async () => (await limitsOf('build bot')).concurrent_requests === 10_000, { timeoutMs: 10_000 });
    await screenshots(keyPage, 'keys-limits');

    t.deepEqual(keyViolations, [], 'no securitypolicyviolation');
    t.deepEqual(keyErrors, [], 'no script error');
  } finally {
    await context.close();
  }
});
