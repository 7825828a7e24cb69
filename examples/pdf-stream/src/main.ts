/**
 * Extracts a PDF's text page by page: the file is uploaded once and each page is printed as the
 * server's event stream delivers it, so a long document shows its first pages at once. Breaking
 * out of the loop (here: `--stop-after`) aborts the request and the server stops parsing.
 *
 * Run: `SVC_TOKEN=<a key with inference:invoke> node src/main.ts manual.pdf --max-pages 20`.
 */
import { parseArgs } from 'node:util';
import { createClient, SvcError } from '@svc/client';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'max-pages': { type: 'string', default: '32' },
    'stop-after': { type: 'string' },
    'preview-chars': { type: 'string', default: '80' },
  },
});
const [file] = positionals;
if (!file) {
  process.stderr.write('usage: node src/main.ts <file.pdf> [--max-pages N] [--stop-after N]\n');
  process.exit(2);
}

const svc = createClient(); // SVC_BASE_URL and SVC_TOKEN come from the environment.
const pages = svc.pdf.streamPages(file, { maxPages: Number(values['max-pages']) });
const stopAfter = values['stop-after'] === undefined ? Infinity : Number(values['stop-after']);
const preview = Number(values['preview-chars']);
let printed = 0;
try {
  for await (const page of pages) {
    const text = page.text.replace(/\s+/g, ' ').trim();
    process.stdout.write(`page ${page.page_number}: ${page.char_count} chars  ${text.length > preview ? `${text.slice(0, preview - 1)}…` : text}\n`);
    printed += 1;
    if (printed >= stopAfter) break;
  }
} catch (error) {
  if (!SvcError.isInstance(error)) throw error;
  process.stderr.write(`extraction failed: ${error.code}: ${error.message}\n`);
  process.exit(1);
}
const summary = pages.summary;
process.stdout.write(
  summary
    ? `done: ${summary.pages_returned} of ${summary.page_count} pages, ${summary.char_count} chars, engine ${summary.engine}${summary.truncated ? `, truncated (${summary.truncated_reason})` : ''}\n`
    : `stopped after ${printed} pages\n`,
);
