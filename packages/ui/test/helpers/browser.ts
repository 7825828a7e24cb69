import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

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

/** The screenshots' sizes: a common laptop's width and a phone's. */
const SCREENSHOT_VIEWPORTS = [{ width: 1280, height: 800 }, NARROW];

/**
 * Writes <name>-1280.png and -390.png, and the same in dark mode (<name>-1280-dark.png, ...), see
 * SCREENSHOTS; leaves the page wide again, in the scheme its context gave it.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const viewport of SCREENSHOT_VIEWPORTS) {
      await page.setViewportSize(viewport);
      await page.screenshot({ path: `${SCREENSHOTS}${name}-${viewport.width}${scheme === 'dark' ? '-dark' : ''}.png` });
    }
  }
  await page.emulateMedia({ colorScheme: null });
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

/**
 * Every `securitypolicyviolation` event of every page of `target` from now on (its directive, what
 * was blocked and where), kept on the test's side so a navigation does not lose them. A refused
 * eval or inline script is one even when the page catches the error, and a reporting endpoint
 * would get a report for each. They go into `violations` when given (a test's list of errors).
 */
export async function recordCspViolations(target: BrowserContext | Page, violations: string[] = []): Promise<string[]> {
  await target.exposeFunction('__svcCspViolation', (text: string) => void violations.push(text));
  await target.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) =>
      (globalThis as unknown as { __svcCspViolation: (text: string) => void }).__svcCspViolation(
        `${event.effectiveDirective} blocked ${event.blockedURI} at ${event.sourceFile}:${event.lineNumber} on ${location.pathname}`,
      ),
    );
  });
  return violations;
}

/**
 * The words inside `selector`'s elements that are drawn on more than one line: split inside the
 * word ("Scope s", "Rot ate"), which a reader takes for two words.
 */
export function wordsSplitAcrossLines(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((selector) => {
    const split: string[] = [];
    for (const element of document.querySelectorAll(selector)) {
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of (node.textContent ?? '').matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, word.index);
          range.setEnd(node, word.index + word[0].length);
          const lines = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)));
          if (lines.size > 1) split.push(word[0]);
        }
      }
    }
    return split;
  }, selector);
}

/** Whether the element is wholly inside the viewport now (not merely present and visible somewhere on the page), to a pixel. */
export function inViewport(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((selector) => {
    const box = document.querySelector(selector)?.getBoundingClientRect();
    return box !== undefined && box.top >= -1 && box.bottom <= innerHeight + 1 && box.height > 0;
  }, selector);
}

/** axe-core's violations of every impact (minor and moderate too) on the page as it is now. */
export async function axeViolations(page: Page): Promise<AxeFinding[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate(() => (globalThis as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] }));
  return results.violations.map((violation) => ({
    id: violation.id,
    impact: violation.impact,
    help: violation.help,
    targets: violation.nodes.map((node) => node.target.join(' ')),
  }));
}

/**
 * Checks the page at both widths in both colour schemes: axe at every impact level and nothing
 * scrolling sideways. Leaves the page wide and in the light scheme. Answers what failed, by where.
 */
export async function everyWidthAndScheme(page: Page): Promise<string[]> {
  const failures: string[] = [];
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    for (const viewport of [WIDE, NARROW]) {
      await page.setViewportSize(viewport);
      for (const finding of await axeViolations(page))
        failures.push(`${colorScheme} ${viewport.width}px: ${finding.id} (${finding.impact}) ${finding.targets.join(', ')}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize(WIDE);
  if ((await overflowAt360(page)) > 0) failures.push('the page scrolls sideways at 360 px');
  return failures;
}
