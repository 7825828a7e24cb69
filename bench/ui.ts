/**
 * Console bench: the board page (/ui/) loaded in Debian's headless Chromium from a local server
 * on the embedded database, each round in a fresh browser context (empty cache, as a first
 * visit). Reports the median first contentful paint and the JavaScript transferred (gzip, as
 * the server sends it) before the board's channels are on screen. Targets (issue 32): under
 * 500 ms and under 100 KB. No baseline: the anchors the issue names (LiteLLM's UI, the Hugging
 * Face Hub, Stripe's dashboard) cannot be run here, so the figures stand against the targets.
 *
 *   pnpm build && pnpm bench:ui        # BENCH_ROUNDS (default 9)
 */
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { startTestServer } from '@svc/testing/test-server';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';

const requireFromUi = createRequire(new URL('../packages/ui/package.json', import.meta.url));
const { chromium } = requireFromUi('playwright-core') as typeof import('../packages/ui/node_modules/playwright-core/index.d.ts');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const out = (line: string) => process.stdout.write(`${line}\n`);

const svc = await startTestServer();
const browser = await chromium.launch({
  executablePath: process.env.SVC_CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
try {
  // A board with something on it: 20 channels of 5 posts.
  const client = svc.client();
  for (let channel = 0; channel < 20; channel++) {
    for (let post = 0; post < 5; post++) {
      await client.blackboard.put({
        body: { key: `bench:ui-${channel}`, value: { text: `post ${post} of channel ${channel}`, kind: 'note', topics: ['bench'] } },
      });
    }
  }
  const paints: number[] = [];
  const boards: number[] = [];
  const scripts: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${svc.baseUrl}/ui/`);
    await page.locator('.channel-list .channel').first().waitFor({ timeout: 30_000 });
    const measured = await page.evaluate(() => {
      const paint = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN;
      const resources = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
      const javascript = resources.filter((entry) => entry.initiatorType === 'script' || /\.js(\?|$)/.test(entry.name));
      return { paint, board: performance.now(), scriptBytes: javascript.reduce((sum, entry) => sum + entry.transferSize, 0) };
    });
    paints.push(measured.paint);
    boards.push(measured.board);
    scripts.push(measured.scriptBytes);
    await context.close();
  }
  const paint = median(paints);
  const javascriptKb = median(scripts) / 1024;
  out(
    `board page, ${ROUNDS} cold loads (load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}):`,
  );
  out(`  first contentful paint: median ${paint.toFixed(0)} ms (${paints.map((value) => value.toFixed(0)).join(', ')})`);
  out(`  channels on screen:     median ${median(boards).toFixed(0)} ms`);
  out(`  JavaScript transferred: median ${javascriptKb.toFixed(1)} KB`);
  reportFigures('ui', [
    {
      figure: 'board first contentful paint',
      svc: Number(paint.toFixed(0)),
      unit: 'ms',
      target: { on: 'svc', op: '<', value: 500 },
      note: `channels on screen at ${median(boards).toFixed(0)} ms`,
    },
    { figure: 'board JavaScript transferred', svc: Number(javascriptKb.toFixed(1)), unit: 'KB', target: { on: 'svc', op: '<', value: 100 } },
  ]);
} finally {
  await browser.close();
  await svc.close();
}
