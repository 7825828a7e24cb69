import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's chromium package; never a browser a tool downloads. `.ci/run` installs it when missing. */
export const CHROMIUM_PATH = process.env.SVC_CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/** The widths the console is laid out for: a desktop and a phone. */
export const WIDE = { width: 1440, height: 900 };
export const NARROW = { width: 390, height: 844 };

/**
 * With SVC_UI_SCREENSHOTS=1 the screenshots go to docs/ui/, which docs/ui.md shows; otherwise
 * they are still taken (a page that cannot be drawn fails) but written to a temporary folder,
 * so a test run does not leave the checkout's images changed (their dates differ every run).
 */
const SCREENSHOTS =
  process.env.SVC_UI_SCREENSHOTS === '1' ? fileURLToPath(new URL('../../../../docs/ui/', import.meta.url)) : `${path.join(tmpdir(), 'svc-ui-screenshots')}/`;

/** Writes <name>-1440.png and -390.png (see SCREENSHOTS), and leaves the page wide again. */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  for (const viewport of [WIDE, NARROW]) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: `${SCREENSHOTS}${name}-${viewport.width}.png` });
  }
  await page.setViewportSize(WIDE);
}

/** How far the page is wider than a 360 px screen (0: it fits, nothing scrolls sideways). */
export async function overflowAt360(page: Page): Promise<number> {
  await page.setViewportSize({ width: 360, height: 780 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  await page.setViewportSize(WIDE);
  return overflow;
}

export interface AxeFinding {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. It is evaluated through
 * the DevTools protocol, which the page's CSP does not govern; the page's own scripts still are.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] }));
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
}
