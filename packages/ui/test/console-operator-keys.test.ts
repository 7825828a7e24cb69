import test from 'ava';
import type { Browser } from 'playwright-core';
import { readFile } from 'node:fs/promises';
import { startFakeOpenAiUpstream, type FakeUpstream } from '@svc/testing/fake-openai-upstream';
import { signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { everyWidthAndScheme, launchChromium, recordCspViolations, screenshots, WIDE } from './helpers/browser.ts';

/**
 * The operator's page of every owner's keys (issue 45) in Debian's Chromium against a real server:
 * owner, expiry, last use and spend per key, the server-side search as one types, and limits
 * edited in place; axe at both widths in both schemes, and no CSP violation.
 */
let fake: FakeUpstream;
let svc: TestServer;
let browser: Browser;

test.before(async () => {
  fake = await startFakeOpenAiUpstream();
  [svc, browser] = await Promise.all([
    startTestServer({
      env: { SVC_KEY_USAGE_FLUSH_MS: '50', SVC_UPSTREAM_BASE_URL: fake.baseUrl, SVC_UPSTREAM_API_KEY: 'sk-fake', SVC_UPSTREAM_MODELS: 'answer-a,answer-b' },
    }),
    launchChromium(),
  ]);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  await fake?.close();
});

test.serial('the operator finds every owner’s keys with last use and expiry, searches them, and edits a limit in place', async (t) => {
  const alice = await signInAgent(svc);
  const bob = await signInAgent(svc);
  const used = await alice.client.developerKeys.create({ body: { name: 'alice build bot', scopes: ['models:read'] } });
  await bob.client.developerKeys.create({ body: { name: 'bob nightly eval', scopes: ['models:read'], expires_in_days: 7 } });
  t.is((await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${used.secret}` } })).status, 200);

  const context = await browser.newContext({ viewport: WIDE });
  const violations = await recordCspViolations(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByLabel('Operator token').fill(svc.operatorToken);
  await page.getByRole('button', { name: 'Use the operator token' }).click();
  await page.getByRole('link', { name: 'All keys' }).click();
  await page.getByTestId('operator-keys').waitFor({ timeout: 15_000 });
  t.is(await page.getByRole('link', { name: 'Operator', exact: true }).getAttribute('aria-current'), 'page', 'the navigation marks the section');

  const rowOf = (name: string) => page.getByTestId('operator-keys').getByRole('row', { name: new RegExp(name) });
  t.is(await rowOf('alice build bot').getByTestId('key-owner').textContent(), alice.id);
  t.is(await rowOf('bob nightly eval').getByTestId('key-owner').textContent(), bob.id);
  t.regex((await rowOf('alice build bot').getByTestId('key-last-used').textContent()) ?? '', /ago|now/);
  t.is(await rowOf('bob nightly eval').getByTestId('key-last-used').textContent(), 'never');
  t.regex((await rowOf('bob nightly eval').getByTestId('key-expires').textContent()) ?? '', /in 6 days|next week/);
  t.is(await rowOf('alice build bot').getByTestId('key-expires').textContent(), 'never');
  t.is(await rowOf('alice build bot').getByTestId('key-spent').textContent(), '0');
  t.deepEqual(await everyWidthAndScheme(page), []);
  await screenshots(page, 'operator-keys');

  // The search goes to the server (q) as one types: the owner's id finds bob's key alone.
  await page.getByLabel('Search by name, key id or owner').pressSequentially(bob.id.slice(0, 12), { delay: 20 });
  await waitUntil('bob’s key alone', async () => (await page.getByTestId('operator-keys').locator('tbody tr').count()) === 1, { timeoutMs: 10_000 });
  t.is(await page.getByTestId('operator-keys').locator('tbody tr td').first().textContent(), 'bob nightly eval');
  await page.getByLabel('Search by name, key id or owner').fill('no such key anywhere');
  await page.getByTestId('no-keys').waitFor({ timeout: 10_000 });
  t.deepEqual(await everyWidthAndScheme(page), [], 'the empty state too');
  await page.getByLabel('Search by name, key id or owner').fill('');

  // A limit edited in place by the operator reaches the key.
  await rowOf('alice build bot').getByRole('button', { name: 'Edit the limits of alice build bot' }).click();
  const editor = page.getByRole('form', { name: 'Limits of alice build bot' });
  await editor.getByLabel('requests per minute').fill('12');
  await editor.getByRole('button', { name: 'Save the limits' }).click();
  await waitUntil(
    'the saved limit in the row',
    async () => /requests per minute 12/.test((await rowOf('alice build bot').getByTestId('key-limits').textContent()) ?? ''),
    { timeoutMs: 10_000 },
  );
  const stored = (await alice.client.developerKeys.list()).data.find((key) => key.credential_id === used.credential.credential_id)!;
  t.is(stored.limits.requests_per_minute, 12);

  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
  await context.close();
});

test.serial('the operator reads usage by day, model and key over a date range, as a chart and a CSV', async (t) => {
  const carol = await signInAgent(svc);
  const key = await carol.client.developerKeys.create({ body: { name: '=carol formula', scopes: ['models:read', 'inference:invoke'] } });
  const chat = (model: string) =>
    fetch(`${svc.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'a few words' }] }),
    }).then((answer) => answer.status);
  t.is(await chat('answer-a'), 200);
  t.is(await chat('answer-b'), 200);
  t.is(await chat('answer-b'), 200);

  const context = await browser.newContext({ viewport: WIDE, acceptDownloads: true });
  const violations = await recordCspViolations(context);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByLabel('Operator token').fill(svc.operatorToken);
  await page.getByRole('button', { name: 'Use the operator token' }).click();
  await page.getByRole('link', { name: 'Usage' }).click();
  await page.getByTestId('usage-by-key').waitFor({ timeout: 15_000 });
  t.regex((await page.getByTestId('usage-totals').textContent()) ?? '', /: 3 calls, \d+ tokens, 0 credits\./);
  t.deepEqual(await page.getByTestId('usage-by-model').locator('tbody th').allTextContents(), ['answer-b', 'answer-a'], 'busiest first');
  t.deepEqual(await page.getByTestId('usage-by-key').locator('tbody th').allTextContents(), ['=carol formula']);
  const today = new Date().toISOString().slice(0, 10);
  t.regex((await page.getByRole('img', { name: /^Calls per day/ }).getAttribute('aria-label')) ?? '', new RegExp(`${today} 3`));
  t.deepEqual(await everyWidthAndScheme(page), []);
  await screenshots(page, 'operator-usage');

  // The CSV: made in the page; a name a spreadsheet would run is written as text.
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export as CSV' }).click()]);
  t.regex(file.suggestedFilename(), /^svc-usage-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = await readFile((await file.path())!, 'utf8');
  const lines = csv.split('\r\n');
  t.is(lines[0], 'group,day_or_model_or_key,name,owner,requests,prompt_tokens,completion_tokens,total_tokens,credits');
  t.true(
    lines.some((line) => line.startsWith(`day,${today},,,3,`)),
    csv,
  );
  t.true(
    lines.some((line) => line.startsWith(`key,${key.credential.credential_id},"'=carol formula",${carol.id},3,`)),
    csv,
  );

  // A range with no use says what to do; a range past 92 days is refused with the server's words.
  await page.getByLabel('From').fill('2026-01-01');
  await page.getByLabel('To').fill('2026-01-05');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByTestId('no-usage').waitFor({ timeout: 10_000 });
  t.deepEqual(await everyWidthAndScheme(page), [], 'the empty state too');
  await page.getByLabel('To').fill('2026-06-01');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByText(/at most 92/).waitFor({ timeout: 10_000 });

  t.deepEqual(violations, [], 'no securitypolicyviolation');
  t.deepEqual(errors, [], 'no script error');
  await context.close();
});
