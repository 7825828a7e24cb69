import { createHash } from 'node:crypto';
import { CONSOLE_PATH } from '@svc/schemas';
import { type ConsoleFile, consoleFile } from './console-files.ts';

/** Vite's link to the console's stylesheet in index.html. */
const STYLESHEET_LINK = new RegExp(`<link rel="stylesheet"(?: crossorigin)? href="${CONSOLE_PATH}(assets/[^"]+\\.css)">`, 'g');

/**
 * The console's files with index.html's stylesheets written into it as `<style>` elements, and
 * the CSP sources that allow exactly those (`'sha256-…'` of each element's text). A linked
 * stylesheet blocks the first paint until it has come (a round trip after the HTML, on a busy
 * machine a slow one); the console's is about 5 KB, 1.5 KB gzipped, so every page carries it.
 * The file stays served under its name for anything that links it.
 */
export function inlineStylesheets(files: ReadonlyMap<string, ConsoleFile>): { files: ReadonlyMap<string, ConsoleFile>; styleSources: string[] } {
  const index = files.get('index.html');
  if (!index) return { files, styleSources: [] };
  const styleSources: string[] = [];
  const html = index.body.toString('utf8').replace(STYLESHEET_LINK, (link, file: string) => {
    const css = files.get(file)?.body.toString('utf8');
    // A stylesheet that could end its own element is left linked (the build's never does).
    if (css === undefined || /<\/style/i.test(css)) return link;
    styleSources.push(`'sha256-${createHash('sha256').update(css).digest('base64')}'`);
    return `<style>${css}</style>`;
  });
  if (styleSources.length === 0) return { files, styleSources };
  return { files: new Map(files).set('index.html', consoleFile('.html', Buffer.from(html))), styleSources };
}
