import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Real PDFs from Debian documentation packages, fetched on first use by the script (never committed). */
export function realPdfCorpus(): string[] {
  const directory = process.env.PDF_CORPUS_DIR ?? path.join(ROOT, '.cache/pdf-corpus');
  if (!existsSync(path.join(directory, '.complete'))) {
    execFileSync(path.join(ROOT, 'scripts/fetch-pdf-corpus.sh'), { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, PDF_CORPUS_DIR: directory } });
  }
  return readdirSync(directory)
    .filter((name) => name.endsWith('.pdf'))
    .sort()
    .map((name) => path.join(directory, name));
}

/** The malformed, fuzzed and encrypted files of ../shared/corpus/tricky-pdfs. */
export function trickyPdfCorpus(): string[] {
  const directory = process.env.TRICKY_PDF_DIR ?? path.resolve(ROOT, '../shared/corpus/tricky-pdfs');
  return readdirSync(directory)
    .filter((name) => name.endsWith('.pdf'))
    .sort()
    .map((name) => path.join(directory, name));
}
