import { createHash } from 'node:crypto';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * How svc-server serves the console's files: caching, the security headers, the single-page
 * fallback, `SVC_UI=off`, and the links from `/` and `/llms.txt`. What the pages do is in
 * console-browser.test.ts, in a real browser.
 */
let svc: TestServer;
let off: TestServer;
test.before(async () => {
  [svc, off] = await Promise.all([startTestServer(), startTestServer({ env: { SVC_UI: 'off' } })]);
});
test.after.always(async () => {
  await Promise.all([svc?.close(), off?.close()]);
});

const assetPaths = (html: string) => [...html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((match) => match[1]!);

test('/ui/ is the page: never cached, a strict CSP, no inline script, and fingerprinted assets', async (t) => {
  const response = await fetch(`${svc.baseUrl}/ui/`);
  t.is(response.status, 200);
  t.is(response.headers.get('content-type'), 'text/html; charset=utf-8');
  t.is(response.headers.get('cache-control'), 'no-store');
  const policy = response.headers.get('content-security-policy') ?? '';
  t.regex(policy, /(^|; )script-src 'self'(;|$)/);
  t.regex(policy, /frame-ancestors 'none'/);
  t.regex(policy, /default-src 'none'/);
  t.notRegex(policy, /unsafe-inline|unsafe-eval/);
  t.is(response.headers.get('x-frame-options'), 'DENY');
  t.is(response.headers.get('x-content-type-options'), 'nosniff');
  t.is(response.headers.get('referrer-policy'), 'no-referrer');
  const html = await response.text();
  // Every <script> has a src, but the first-load data block, which is JSON and never run: an inline script would be refused by the CSP anyway.
  t.deepEqual(
    [...html.matchAll(/<script\b[^>]*>/g)].filter((tag) => !/\ssrc="/.test(tag[0]) && tag[0] !== '<script type="application/json" id="svc-first-load">'),
    [],
  );
  const assets = assetPaths(html);
  t.true(assets.length >= 2, html);
  for (const asset of assets) t.regex(asset, /-[A-Za-z0-9_-]{8,}\.(js|css)$/, 'the name carries a content hash');
});

test('the stylesheet comes inside the page, allowed by its hash alone: no request blocks the first paint', async (t) => {
  for (const path of ['/ui/', '/ui/channel?key=ui%3Aserving']) {
    const response = await fetch(`${svc.baseUrl}${path}`, { headers: { accept: 'text/html' } });
    const policy = response.headers.get('content-security-policy') ?? '';
    const html = await response.text();
    t.notRegex(html, /<link rel="stylesheet"/, path);
    const styles = [...html.matchAll(/<style>([^<]*)<\/style>/g)].map((match) => match[1]!);
    t.is(styles.length, 1, path);
    t.true(styles[0]!.length > 1000, 'the whole stylesheet');
    const hash = `'sha256-${createHash('sha256').update(styles[0]!).digest('base64')}'`;
    t.is(/(?:^|; )style-src ([^;]*)/.exec(policy)?.[1], `'self' ${hash}`, path);
  }
});

test('assets are cached for a year as immutable, gzip when asked, and revalidate by ETag', async (t) => {
  const assets = assetPaths(await (await fetch(`${svc.baseUrl}/ui/`)).text());
  // The largest script the page loads (the entry itself may be a few bytes that import the chunks, too small to compress).
  const sizes = await Promise.all(
    assets
      .filter((asset) => asset.endsWith('.js'))
      .map(async (asset) => ({ asset, size: (await (await fetch(`${svc.baseUrl}${asset}`)).arrayBuffer()).byteLength })),
  );
  const script = sizes.sort((a, b) => b.size - a.size)[0]!.asset;
  const response = await fetch(`${svc.baseUrl}${script}`, { headers: { 'accept-encoding': 'gzip' } });
  t.is(response.status, 200);
  t.is(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.is(response.headers.get('content-encoding'), 'gzip');
  t.true((await response.text()).length > 1000);
  const again = await fetch(`${svc.baseUrl}${script}`, { headers: { 'if-none-match': response.headers.get('etag')! } });
  t.is(again.status, 304);
});

test("the page's own routes answer the page; unknown assets, other methods and /ui without its slash do not", async (t) => {
  for (const path of ['/ui/channel?key=a', '/ui/item/bb_000000000000000000000000', '/ui/catalog']) {
    const response = await fetch(`${svc.baseUrl}${path}`);
    t.is(response.status, 200, path);
    t.regex(await response.text(), /<div id="app">/);
  }
  const missing = await fetch(`${svc.baseUrl}/ui/assets/index-00000000.js`);
  t.is(missing.status, 404);
  t.is((await missing.json()).code, 'route_not_found');
  t.is((await fetch(`${svc.baseUrl}/ui/`, { method: 'POST' })).status, 404);
  const bare = await fetch(`${svc.baseUrl}/ui`, { redirect: 'manual' });
  t.is(bare.status, 308);
  t.is(bare.headers.get('location'), '/ui/');
});

test('/ and /llms.txt link the console; with SVC_UI=off there is neither console nor link', async (t) => {
  const root = (await (await fetch(`${svc.baseUrl}/`)).json()) as { links: Record<string, string> };
  t.is(root.links.console, `${svc.baseUrl}/ui/`);
  t.true((await (await fetch(`${svc.baseUrl}/llms.txt`)).text()).includes(`(${svc.baseUrl}/ui/)`));

  t.is((await fetch(`${off.baseUrl}/ui/`)).status, 404);
  const offRoot = (await (await fetch(`${off.baseUrl}/`)).json()) as { links: Record<string, string> };
  t.false('console' in offRoot.links);
  t.false((await (await fetch(`${off.baseUrl}/llms.txt`)).text()).includes('/ui/'));
});

test('GET / from a browser goes to the console; agents, curl and SVC_UI=off keep the JSON', async (t) => {
  const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
  const fromBrowser = await fetch(`${svc.baseUrl}/`, { headers: { accept: browserAccept }, redirect: 'manual' });
  t.is(fromBrowser.status, 302);
  t.is(fromBrowser.headers.get('location'), '/ui/');
  t.regex(fromBrowser.headers.get('vary') ?? '', /accept/i);
  t.is((await fetch(`${svc.baseUrl}/`, { method: 'HEAD', headers: { accept: 'text/html' }, redirect: 'manual' })).status, 302);
  // An agent's Accept (JSON, anything, none) is answered the JSON, and says that it varies by Accept.
  for (const accept of ['application/json', '*/*', 'application/json, text/html;q=0.5', undefined]) {
    const answer = await fetch(`${svc.baseUrl}/`, { headers: accept === undefined ? {} : { accept }, redirect: 'manual' });
    t.is(answer.status, 200, `Accept: ${accept}`);
    t.regex(answer.headers.get('vary') ?? '', /accept/i);
    t.is(((await answer.json()) as { name: string }).name, 'svc');
  }
  // Without the console there is nowhere to send a browser: it gets the JSON too.
  const offBrowser = await fetch(`${off.baseUrl}/`, { headers: { accept: browserAccept }, redirect: 'manual' });
  t.is(offBrowser.status, 200);
  t.is(((await offBrowser.json()) as { name: string }).name, 'svc');
});

test("the console's answers are counted in /v1/metrics by route, never by path", async (t) => {
  const assets = assetPaths(await (await fetch(`${svc.baseUrl}/ui/catalog`)).text());
  for (const asset of assets) await (await fetch(`${svc.baseUrl}${asset}`)).arrayBuffer();
  for (const path of ['/ui/channel?key=a', '/ui/item/bb_1', '/ui/item/bb_2', '/ui/no-such-page']) await (await fetch(`${svc.baseUrl}${path}`)).arrayBuffer();
  const metrics = await (await fetch(`${svc.baseUrl}/v1/metrics`, { headers: { authorization: `Bearer ${svc.operatorToken}` } })).text();
  const count = (route: string) =>
    [...metrics.matchAll(new RegExp(`^svc_http_requests_total\\{route="${route}",method="GET",status="200"\\} (\\d+)$`, 'gm'))].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
  t.true(count('console\\.asset') >= assets.length, metrics);
  t.true(count('console\\.page') >= 5, metrics);
  t.regex(metrics, /svc_http_request_duration_seconds_bucket\{le="0\.001",route="console\.page",method="GET"\}/);
  // No series is named after a path the caller chose.
  t.notRegex(metrics, /route="\/ui/);
  t.notRegex(metrics, /bb_1/);
});
