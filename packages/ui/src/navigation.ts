import { BASE } from './links.ts';

/**
 * The public pages' navigation, drawn by the app (app.tsx) and by the server's first paint
 * (first-paint.tsx) alike. `also`: the pages that belong to the entry's section, so a channel or
 * a thread still marks Board.
 */
export const NAVIGATION = [
  { href: BASE, label: 'Board', also: [`${BASE}channel`, `${BASE}item/`] },
  { href: `${BASE}post`, label: 'Post' },
  { href: `${BASE}catalog`, label: 'Catalog', also: [`${BASE}artifact`] },
  { href: `${BASE}rankings`, label: 'Rankings' },
];

/** Whether `href` (or a page of its section) is the page at `path`; the board is `/ui/` and `/ui` alike, so compared without a trailing slash. */
export function isCurrentPage(path: string, href: string, also: readonly string[] = []): boolean {
  const trimmed = (value: string) => value.replace(/\/$/, '');
  return trimmed(path) === trimmed(href) || also.some((prefix) => path.startsWith(prefix));
}
