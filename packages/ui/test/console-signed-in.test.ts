import test from 'ava';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { randomBytes } from 'node:crypto';
import { startFakeStripe, type FakeStripe } from '@svc/testing/fake-stripe';
import { waitUntil } from '@svc/testing/wait-until';
import { inViewport, launchChromium, NARROW, overflowAt360, recordCspViolations, screenshots, seriousAxeViolations, WIDE } from './helpers/browser.ts';

/**
 * The signed-in console in Debian's Chromium against a real server: OAuth code + PKCE run by the
 * page against svc's own /oauth, keys, jobs, credits, and the operator's moderation. One browser
 * for the file; the tests share one page, since each journey goes on from the sign-in before it.
 */
let svc: TestServer;
let stripe: FakeStripe;
let browser: Browser;
let page: Page;
const errors: string[] = [];
let cspViolations: string[];
const WEBHOOK_SECRET = `whsec_${randomBytes(16).toString('hex')}`;
test.before(async () => {
  // Stripe is the third party: its local fake speaks its API, plays the hosted Checkout page and signs its webhooks.
  stripe = await startFakeStripe();
  [svc, browser] = await Promise.all([
    startTestServer({ env: { STRIPE_SECRET_KEY: 'sk_test_fake_for_svc', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, SVC_STRIPE_API_BASE: stripe.url } }),
    launchChromium(),
  ]);
  stripe.deliverWebhooksTo(`${svc.baseUrl}/webhooks/processor`, WEBHOOK_SECRET);
  // A context of its own (one browser profile), so a test can open a second tab of it.
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  cspViolations = await recordCspViolations(context);
  page = await context.newPage();
  page.on('pageerror', (error) => errors.push(error.message));
});
test.after.always(async () => {
  await browser?.close();
  await svc?.close();
  await stripe?.close();
});

async function checkPage(t: import('ava').ExecutionContext, name: string) {
  t.deepEqual(await seriousAxeViolations(page), [], `${name}: axe found serious or critical violations`);
  t.is(await overflowAt360(page), 0, `${name}: nothing scrolls sideways at 360 px`);
  t.deepEqual(cspViolations.splice(0), [], `${name}: no securitypolicyviolation`);
  await screenshots(page, name);
}

/** What the page says now, for a wait's failure message. */
let lastText = '';
const mainText = () => `the page said: ${lastText.slice(0, 600)}`;
const textOf = async (testId: string) => {
  lastText = (await page.locator('main').textContent()) ?? '';
  return page
    .getByTestId(testId)
    .first()
    .textContent({ timeout: 1000 })
    .catch(() => null);
};

const storedSession = () => page.evaluate(() => JSON.parse(sessionStorage.getItem('svc.console.session') ?? 'null') as Record<string, unknown> | null);

test.serial('sign in through the OAuth redirect: code + PKCE in the browser, tokens in this tab only', async (t) => {
  const navigations: string[] = [];
  page.on('framenavigated', (frame) => frame === page.mainFrame() && navigations.push(frame.url()));
  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await checkPage(t, 'sign-in');
  await page.getByRole('button', { name: 'Sign in with svc' }).click();
  await page.getByRole('heading', { name: 'Developer keys' }).waitFor({ timeout: 15_000 });
  // The browser went through svc's authorization endpoint and came back with a code...
  t.true(
    navigations.some((url) => url.startsWith(`${svc.baseUrl}/ui/callback?code=`)),
    navigations.join('\n'),
  );
  // ...which is gone from the address, and no token was ever in one.
  t.false(page.url().includes('code='));
  const session = (await storedSession())!;
  t.is(session.kind, 'oauth');
  t.truthy(session.refreshToken);
  for (const url of navigations) t.false(url.includes(String(session.accessToken)));
  t.deepEqual(await page.evaluate(() => Object.keys(localStorage)), []);
  const whoami = await svc.client({ token: String(session.accessToken) }).oauth.whoami();
  t.is(whoami.kind, 'agent');

  t.regex((await page.locator('main .meta').first().textContent()) ?? '', /Signed in as agent/);
});

/** The secret just shown is in view (not above the fold of a phone) and has the focus, so it is neither missed nor lost. */
async function secretInViewAndFocused(t: import('ava').ExecutionContext, step: string) {
  await page.getByTestId('key-secret').waitFor({ timeout: 10_000 });
  await page.waitForFunction(() => document.activeElement?.closest('.secret') !== null, undefined, { timeout: 5_000 }).catch(() => undefined);
  const where = await page.evaluate(() => JSON.stringify({ box: document.querySelector('.secret')?.getBoundingClientRect(), height: innerHeight, scrollY }));
  t.true(await inViewport(page, '.secret'), `${step}: the secret is on screen ${where}`);
  t.true(await page.evaluate(() => document.activeElement?.closest('.secret') !== null), `${step}: the focus is on the secret`);
}

const keyAnswers = (token: string) =>
  svc
    .client({ token })
    .oauth.whoami()
    .then(
      () => 200,
      (error: { status: number }) => error.status,
    );

test.serial('create, rotate and revoke a key: the secret is shown once, each step has a receipt', async (t) => {
  // A phone's height: the form's button is far below the top of the page, where the secret appears.
  await page.setViewportSize(NARROW);
  await page.getByLabel('Name').fill('ci key');
  // Required fields say so in words.
  t.regex((await page.locator('label', { has: page.getByLabel('Name') }).textContent()) ?? '', /\(required\)/);
  // No scope: refused here, in the form's words, before anything is sent.
  await page.getByRole('button', { name: 'Create the key' }).click();
  const refusal = (await page.getByRole('alert').textContent({ timeout: 10_000 })) ?? '';
  t.regex(refusal, /Choose at least one scope/);
  t.notRegex(refusal, /body\.scopes|Too small/);
  await page.getByLabel('models:read').check();
  await page.getByLabel('requests per minute').fill('30');
  await page.getByRole('button', { name: 'Create the key' }).click();
  await secretInViewAndFocused(t, 'created');
  t.is(await page.getByRole('alert').count(), 0, 'the earlier refusal is gone once a key is made');
  const first = (await page.getByTestId('key-secret').textContent({ timeout: 10_000 }))!;
  t.is((await svc.client({ token: first }).oauth.whoami()).credential, 'developer_key');
  await page.getByRole('cell', { name: 'active' }).waitFor();
  t.regex((await page.getByRole('row', { name: /ci key/ }).textContent()) ?? '', /requests per minute 30/);
  await page.setViewportSize(WIDE);
  await checkPage(t, 'keys-secret');

  // A refusal now (a second key with no scope) is stale once the next action succeeds.
  await page.getByLabel('Name').fill('no scope');
  await page.getByRole('button', { name: 'Create the key' }).click();
  await page.getByRole('alert').waitFor({ timeout: 10_000 });

  // Rotate asks first, and Cancel changes nothing.
  await page.setViewportSize(NARROW);
  await page.getByRole('button', { name: 'Rotate ci key' }).click();
  await page.getByRole('button', { name: 'Cancel' }).click();
  t.is(await keyAnswers(first), 200, 'Rotate alone did nothing: the key still works');
  await page.getByRole('button', { name: 'Rotate ci key' }).click();
  t.is(await keyAnswers(first), 200, 'asking is not rotating');
  t.regex((await page.locator('.confirm').textContent()) ?? '', /stop at once/);
  await page.getByRole('button', { name: 'Yes, rotate ci key' }).click();
  const second = await waitUntil(
    'the rotated secret',
    async () => {
      const shown = await page.getByTestId('key-secret').textContent();
      return shown !== first && shown;
    },
    { timeoutMs: 10_000 },
  );
  t.is((await svc.client({ token: second }).oauth.whoami()).credential, 'developer_key');
  await secretInViewAndFocused(t, 'rotated');
  t.is(await page.getByRole('alert').count(), 0, 'the refusal before the rotation is gone');
  await page.setViewportSize(WIDE);
  t.is(await keyAnswers(first), 401);

  // Revoke asks first too.
  await page.getByRole('button', { name: 'Revoke ci key' }).first().click();
  t.is(await keyAnswers(second), 200, 'asking is not revoking');
  await page.getByRole('button', { name: 'Yes, revoke ci key' }).click();
  await waitUntil('the revoked key', async () => (await page.getByRole('button', { name: 'Revoke ci key' }).count()) === 0, { timeoutMs: 10_000 });
  t.is(
    await svc
      .client({ token: second })
      .oauth.whoami()
      .catch((error: { status: number }) => error.status),
    401,
  );
  // Leaving the page forgets the secret: it is in no storage.
  t.false(JSON.stringify(await page.evaluate(() => ({ ...sessionStorage, ...localStorage }))).includes(second));

  await page.getByRole('button', { name: 'Receipts of ci key' }).last().click();
  await page.locator('.receipts li').first().waitFor();
  t.regex((await page.locator('.receipts').last().textContent()) ?? '', /rotated|revoked/);
  await checkPage(t, 'keys');
});

test.serial('an expired access token is renewed by refresh rotation before the next call', async (t) => {
  const before = (await storedSession())!;
  await page.evaluate(() => {
    const stored = JSON.parse(sessionStorage.getItem('svc.console.session')!);
    sessionStorage.setItem('svc.console.session', JSON.stringify({ ...stored, expiresAt: Date.now() - 1000 }));
  });
  await page.reload();
  await page.getByRole('heading', { name: 'Your keys' }).waitFor({ timeout: 10_000 });
  const after = await waitUntil(
    'the renewed session',
    async () => {
      const current = await storedSession();
      return current && current.refreshToken !== before.refreshToken && current;
    },
    { timeoutMs: 10_000 },
  );
  t.not(after.accessToken, before.accessToken);
  // The old refresh token was rotated away: it works no more.
  const reuse = await svc
    .client()
    .oauth.refresh({ refreshToken: String(before.refreshToken), clientId: String(before.clientId) })
    .catch((error: { status: number }) => error.status);
  t.is(reuse, 400);
  // Reusing a rotated refresh token revokes its whole family (a stolen copy is worth nothing), so
  // the console has to sign in again.
  t.is(
    await svc
      .client({ token: String(after.accessToken) })
      .oauth.whoami()
      .catch((error: { status: number }) => error.status),
    401,
    'the family is revoked',
  );
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByRole('button', { name: 'Sign in with svc' }).click();
  await page.getByRole('heading', { name: 'Your keys' }).waitFor({ timeout: 15_000 });
  const again = (await storedSession())!;
  t.is((await svc.client({ token: String(again.accessToken) }).oauth.whoami()).kind, 'agent');
});

test.serial('signing in again from the same browser is the same agent: the key made before is listed', async (t) => {
  const first = await svc.client({ token: String((await storedSession())!.accessToken) }).oauth.whoami();
  await page.goto(`${svc.baseUrl}/ui/keys`);
  await page.getByLabel('Name').fill('kept key');
  await page.getByLabel('models:read').check();
  await page.getByRole('button', { name: 'Create the key' }).click();
  await page.getByTestId('key-secret').waitFor({ timeout: 10_000 });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await waitUntil('the session forgotten', async () => (await storedSession()) === null, { timeoutMs: 10_000 });

  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByRole('button', { name: 'Sign in with svc' }).click();
  await page.getByRole('heading', { name: 'Your keys' }).waitFor({ timeout: 15_000 });
  await page.getByRole('row', { name: /kept key/ }).waitFor({ timeout: 10_000 });
  const again = await svc.client({ token: String((await storedSession())!.accessToken) }).oauth.whoami();
  t.is(again.id, first.id);
  t.not(again.client_id, first.client_id, 'a new registration and new tokens, the same person');

  // The browser's id is in a cookie no script reads, sent only to the authorization endpoint.
  const cookies = await page.context().cookies();
  t.deepEqual(
    cookies.map(({ name, path, httpOnly, sameSite }) => ({ name, path, httpOnly, sameSite })),
    [{ name: 'svc_browser', path: '/oauth/authorize', httpOnly: true, sameSite: 'Lax' }],
  );
  t.is(await page.evaluate(() => document.cookie), '');
  // Another browser (no cookie) signs in as another agent.
  const other = await browser.newContext();
  try {
    const otherPage = await other.newPage();
    await otherPage.goto(`${svc.baseUrl}/ui/sign-in`);
    await otherPage.getByRole('button', { name: 'Sign in with svc' }).click();
    await otherPage.getByRole('heading', { name: 'Your keys' }).waitFor({ timeout: 15_000 });
    const stored = await otherPage.evaluate(() => JSON.parse(sessionStorage.getItem('svc.console.session')!) as { accessToken: string });
    t.not((await svc.client({ token: stored.accessToken }).oauth.whoami()).id, first.id);
    t.is(await otherPage.getByRole('row', { name: /kept key/ }).count(), 0);
  } finally {
    await other.close();
  }
});

test.serial('follow a job to its result', async (t) => {
  await page.goto(`${svc.baseUrl}/ui/jobs`);
  await page.getByRole('button', { name: 'Submit the job' }).click();
  await waitUntil(
    () => `the job to complete; ${mainText()}`,
    async () => (await textOf('job-status')) === 'completed',
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  const result = (await page.getByTestId('job-result').textContent()) ?? '';
  t.true(result.includes('1024'), result);
  const jobId = ((await page.locator('#job-heading code').textContent()) ?? '').trim();
  t.regex(jobId, /^job_/);
  // The list is the server's (GET /v1/jobs), not this tab's memory: another tab of this browser
  // signs in (the same agent) and lists the job.
  const fresh = await page.context().newPage();
  try {
    await fresh.goto(`${svc.baseUrl}/ui/sign-in`);
    await fresh.getByRole('button', { name: 'Sign in with svc' }).click();
    await fresh.getByRole('heading', { name: 'Your keys' }).waitFor({ timeout: 15_000 });
    await fresh.getByRole('link', { name: 'Jobs' }).click();
    const row = fresh.getByRole('row', { name: new RegExp(jobId) });
    await row.waitFor({ timeout: 10_000 });
    t.regex((await row.textContent()) ?? '', /completed\s*calculate\s*2 of 2/);
    await fresh.getByRole('button', { name: `Follow ${jobId}` }).click();
    await fresh.getByTestId('job-result').waitFor({ timeout: 10_000 });
    t.true(((await fresh.getByTestId('job-result').textContent()) ?? '').includes('1024'));
  } finally {
    await fresh.close();
  }
  await checkPage(t, 'jobs');
});

test.serial('buy credits through Checkout: the redirect, the hosted page, the webhook, and the new balance on return', async (t) => {
  await page.goto(`${svc.baseUrl}/ui/credits`);
  t.is(
    await waitUntil(
      () => `the balance; ${mainText()}`,
      () => textOf('spendable'),
      { timeoutMs: 10_000, intervalMs: 100 },
    ),
    '0',
  );
  // Leaving Checkout without paying comes back with nothing charged.
  await page.getByRole('button', { name: '1000 credits for 5.00 USD' }).click();
  await page.waitForURL(`${stripe.url}/c/pay/**`, { timeout: 10_000 });
  await page.getByRole('link', { name: 'Back' }).click();
  await page.waitForURL(`${svc.baseUrl}/ui/credits`, { timeout: 10_000 });
  t.is(
    await waitUntil(
      () => `the cancelled checkout; ${mainText()}`,
      () => textOf('checkout-outcome'),
      { timeoutMs: 10_000, intervalMs: 100 },
    ),
    'Checkout was left without paying; nothing was charged.',
  );
  t.is(await textOf('spendable'), '0');

  await page.getByRole('button', { name: '1000 credits for 5.00 USD' }).click();
  // Off to the processor's page (another origin), as Checkout's redirect does.
  await page.waitForURL(`${stripe.url}/c/pay/**`, { timeout: 10_000 });
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.waitForURL(`${svc.baseUrl}/ui/credits`, { timeout: 10_000 });
  // The grant is the webhook's, which comes after the buyer is back: the page waits for it.
  await waitUntil(
    () => `the confirmed payment; ${mainText()}`,
    async () => (await textOf('checkout-outcome'))?.startsWith('Payment confirmed: 1000 credits added'),
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  t.is(
    await waitUntil(
      () => `the new balance; ${mainText()}`,
      async () => (await textOf('spendable')) === '1000' && '1000',
      { timeoutMs: 10_000 },
    ),
    '1000',
  );
  t.deepEqual(
    stripe.deliveries.map(({ type, status }) => ({ type, status })),
    [{ type: 'checkout.session.completed', status: 200 }],
  );
  const sent = stripe.requests.at(-1)!;
  t.is(sent.form.success_url, `${svc.baseUrl}/ui/credits?checkout=success`);
  t.is(sent.form.cancel_url, `${svc.baseUrl}/ui/credits?checkout=cancelled`);
  t.false(page.url().includes('checkout='), 'the address is cleaned');
  await checkPage(t, 'credits-bought');
});

test.serial('see usage and the balance change after a credit-funded call; the chart and the CSV export', async (t) => {
  const token = String((await storedSession())!.accessToken);
  const call = await fetch(`${svc.baseUrl}/v1/credits/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'ui-credit-call-1' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'What is svc?' }] }),
  });
  t.is(call.status, 200, await call.clone().text());
  await page.goto(`${svc.baseUrl}/ui/credits`);
  t.is(
    await waitUntil(
      () => `the new balance; ${mainText()}`,
      async () => (await textOf('spendable')) === '999' && '999',
      { timeoutMs: 10_000, intervalMs: 100 },
    ),
    '999',
  );
  t.is(await page.locator('table.usage tbody tr').count(), 1);
  await page.locator('.chart canvas').first().waitFor({ state: 'visible', timeout: 10_000 });
  // The time axis is the data's day and a day either side: its middle is the day of the call,
  // and the legend names that day and its count, not "--".
  const today = new Date().toISOString().slice(0, 10);
  const legend = () => page.locator('.chart .u-legend .u-series').allTextContents();
  t.deepEqual(
    (await legend()).map((text) => text.trim()),
    [`Day (UTC)${today}`, 'calls per day1'],
  );
  const plot = (await page.locator('.chart .u-over').boundingBox())!;
  await page.mouse.move(plot.x + plot.width / 2, plot.y + plot.height / 2);
  t.is((await legend())[0]?.trim(), `Day (UTC)${today}`, 'the middle of the axis is the day of the data');
  await page.mouse.move(0, 0);
  // The scale uPlot drew, read back from it: a day either side of the data, not months or years.
  const midnight = Date.parse(`${today}T00:00:00Z`) / 1000;
  t.is(await page.locator('.chart').getAttribute('data-x-range'), `${midnight - 86_400}..${midnight + 86_400}`);
  await checkPage(t, 'credits');

  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export every receipt as CSV' }).click();
  const csv = await (await download).createReadStream().then(async (stream) => {
    let text = '';
    for await (const chunk of stream) text += chunk;
    return text;
  });
  t.is(csv.trim().split('\n').length, 2, csv);
});

test.serial('file a catalog request, then moderate it as the operator with its history', async (t) => {
  await page.goto(`${svc.baseUrl}/ui/requests`);
  await page.getByLabel('Repository').fill('BAAI/bge-m3');
  await page.getByLabel('Use case').fill('multilingual retrieval');
  await page.getByLabel('Target tool').fill('vllm');
  await page.getByRole('button', { name: 'File the request' }).click();
  await waitUntil(
    () => `the filed request; ${mainText()}`,
    () => textOf('request-status'),
    { timeoutMs: 10_000, intervalMs: 100 },
  );
  t.is(await page.getByTestId('request-status').first().textContent(), 'submitted');

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`${svc.baseUrl}/ui/sign-in`);
  await page.getByLabel(/^Operator token/).fill(svc.operatorToken);
  await page.getByRole('button', { name: 'Use the operator token' }).click();
  await page.getByRole('heading', { name: 'Busiest routes' }).waitFor({ timeout: 10_000 });
  t.true((await page.locator('tbody tr').count()) > 0);
  await checkPage(t, 'operator');

  await page.getByRole('link', { name: 'Moderation queue' }).click();
  await page.getByRole('heading', { name: 'Moderation queue' }).waitFor();
  await page.getByRole('button', { name: 'History and moderation' }).first().click();
  await page.getByLabel('New status').selectOption('accepted');
  await page.getByLabel('Note').fill('mirroring next week');
  await page.getByRole('button', { name: 'Set the status' }).click();
  await waitUntil('the accepted status', async () => (await page.getByTestId('request-status').first().textContent()) === 'accepted', { timeoutMs: 10_000 });
  await page.locator('.history li').nth(1).waitFor({ timeout: 10_000 });
  t.regex((await page.locator('.history').textContent()) ?? '', /operator: submitted → accepted — mirroring next week/);
  await checkPage(t, 'moderation');
  t.deepEqual(errors, []);
});
