import { CONSOLE_PATH } from '@svc/schemas';
import type { ConsoleFile } from './console-files.ts';

/** One chunk of Vite's build manifest (`.vite/manifest.json`, vite.config.ts' `build.manifest`). */
interface ManifestChunk {
  file: string;
  imports?: string[];
}

/**
 * The public pages that load their own chunk when opened (app.tsx's lazy routes), by their path
 * under /ui/. The board, a channel and a thread are in the first load already.
 */
const LAZY_PUBLIC_PAGES: Readonly<Record<string, string>> = { artifact: 'src/pages/artifact.tsx' };

/**
 * For each lazy public page, the `<link rel="modulepreload">` tags of the chunks it needs and
 * index.html does not preload already: the browser fetches them while it reads the first script,
 * not once that script has run and the router asked for the page. Empty when the build has no
 * manifest (an older build): the page then loads its chunk as before.
 */
export function pagePreloads(files: ReadonlyMap<string, ConsoleFile>): ReadonlyMap<string, string> {
  const manifestFile = files.get('.vite/manifest.json');
  const index = files.get('index.html')?.body.toString('utf8') ?? '';
  const preloads = new Map<string, string>();
  if (!manifestFile) return preloads;
  const manifest = JSON.parse(manifestFile.body.toString('utf8')) as Record<string, ManifestChunk>;
  for (const [page, source] of Object.entries(LAZY_PUBLIC_PAGES)) {
    const chunks = new Set<string>();
    const visit = (key: string) => {
      const chunk = manifest[key];
      if (!chunk || chunks.has(chunk.file)) return;
      chunks.add(chunk.file);
      for (const imported of chunk.imports ?? []) visit(imported);
    };
    visit(source);
    const tags = [...chunks]
      .filter((file) => files.has(file) && !index.includes(`${CONSOLE_PATH}${file}"`))
      .map((file) => `<link rel="modulepreload" crossorigin href="${CONSOLE_PATH}${file}">`);
    preloads.set(page, tags.join(''));
  }
  return preloads;
}
