import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** One built file of the console, held in memory with its gzip form: the whole console is about 200 KB. */
export interface ConsoleFile {
  readonly body: Buffer;
  readonly gzipped: Buffer | undefined;
  readonly contentType: string;
  readonly etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json']);

/**
 * Where the build of packages/ui is: `console/` at the root of @svc/server's package, found by
 * walking up from this module, which runs from `src/console/` in a checkout, from `dist/` when
 * installed, and from the start bundle's cache directory under the package.
 */
export function findConsoleDirectory(from: string = fileURLToPath(import.meta.url)): string | undefined {
  for (let directory = path.dirname(from); ; directory = path.dirname(directory)) {
    const candidate = path.join(directory, 'console');
    if (existsSync(path.join(candidate, 'index.html')) && existsSync(path.join(directory, 'package.json'))) return candidate;
    if (path.dirname(directory) === directory) return undefined;
  }
}

/**
 * Reads every built file once, at start: requests are then answered from a map of known paths,
 * so no request path ever reaches the file system (no traversal to guard against).
 */
export async function loadConsoleFiles(directory: string): Promise<Map<string, ConsoleFile>> {
  const files = new Map<string, ConsoleFile>();
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const absolute = path.join(entry.parentPath, entry.name);
    const relative = path.relative(directory, absolute).split(path.sep).join('/');
    files.set(relative, consoleFile(path.extname(entry.name), await readFile(absolute)));
  }
  return files;
}

/** A console file as served: its body, its gzip form where that pays, its type by `extension` (`.html`), and an ETag of its bytes. */
export function consoleFile(extension: string, body: Buffer): ConsoleFile {
  return {
    body,
    gzipped: COMPRESSIBLE.has(extension) && body.length > 1024 ? gzipSync(body) : undefined,
    contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
  };
}
