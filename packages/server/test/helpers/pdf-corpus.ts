import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestServer } from '@svc/testing/test-server';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/**
 * Real PDFs from Debian documentation packages, fetched on first use by the script (never
 * committed). The script needs apt, so only `pnpm test:corpus` calls this.
 */
export function realPdfCorpus(): string[] {
  const directory = process.env.PDF_CORPUS_DIR ?? path.join(ROOT, '.cache/pdf-corpus');
  if (!existsSync(path.join(directory, '.complete'))) {
    execFileSync(path.join(ROOT, 'scripts/fetch-pdf-corpus.sh'), {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, PDF_CORPUS_DIR: directory },
    });
  }
  return readdirSync(directory)
    .filter((name) => name.endsWith('.pdf'))
    .sort()
    .map((name) => path.join(directory, name));
}

/** The malformed, fuzzed and encrypted files of ../shared/corpus/tricky-pdfs (TRICKY_PDF_DIR): only the corpus lane reads them. */
export function trickyPdfCorpus(): string[] {
  const directory = process.env.TRICKY_PDF_DIR ?? path.resolve(ROOT, '../shared/corpus/tricky-pdfs');
  return readdirSync(directory)
    .filter((name) => name.endsWith('.pdf'))
    .sort()
    .map((name) => path.join(directory, name));
}

export interface UploadOutcome {
  status: number;
  code?: string;
  ms: number;
  pages_returned?: number;
  page_count?: number;
  char_count?: number;
}

/** POSTs one PDF to the upload route as the operator; its status, refusal code, page counts and time. */
export async function uploadPdf(svc: TestServer, bytes: Uint8Array<ArrayBuffer>): Promise<UploadOutcome> {
  const started = performance.now();
  const response = await fetch(`${svc.baseUrl}/v1/pdf/extract/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.operatorToken}`, 'content-type': 'application/pdf' },
    body: bytes,
  });
  const body = (await response.json()) as Omit<UploadOutcome, 'status' | 'ms'>;
  return {
    status: response.status,
    ms: performance.now() - started,
    code: body.code,
    pages_returned: body.pages_returned,
    page_count: body.page_count,
    char_count: body.char_count,
  };
}

/**
 * Uploads every item two at a time (the worker count) while timing a health check every 200 ms.
 * The bound a test puts on the health check is loose: on a 2-core machine the two busy workers
 * and the embedded database share the cores with the event loop; what matters is that it answers.
 */
export async function uploadAll<T>(
  svc: TestServer,
  items: T[],
  bytesOf: (item: T) => Uint8Array<ArrayBuffer>,
): Promise<{ outcomes: Map<T, UploadOutcome>; slowestHealthMs: number }> {
  const outcomes = new Map<T, UploadOutcome>();
  let slowestHealthMs = 0;
  let done = false;
  const health = (async () => {
    while (!done) {
      const started = performance.now();
      const response = await fetch(`${svc.baseUrl}/healthz`);
      await response.arrayBuffer();
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  const queue = [...items];
  await Promise.all(
    [0, 1].map(async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) outcomes.set(item, await uploadPdf(svc, bytesOf(item)));
    }),
  );
  done = true;
  await health;
  return { outcomes, slowestHealthMs };
}
