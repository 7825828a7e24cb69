import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '@svc/testing/test-server';
import { textPdf } from '@svc/testing/pdf-fixtures';
import { waitUntil } from '@svc/testing/wait-until';

/** What the PDF parser pool's workers are doing, as GET /v1/cache reports it (`pdf-workers`). */
export interface PdfWorkers {
  /** Admitted parses: running plus waiting. */
  entries: number;
  threads: number;
  starting: number;
  busy: number;
  waiting: number;
}

export async function pdfWorkers(svc: TestServer): Promise<PdfWorkers> {
  const { caches } = await svc.operator.models.cache();
  const pool = caches.find((cache) => cache.name === 'pdf-workers');
  if (!pool?.workers) throw new Error(`GET /v1/cache reports no pdf-workers pool: ${JSON.stringify(caches)}`);
  return { entries: pool.entries, ...pool.workers };
}

/**
 * Waits until the pool's state passes `check` (the last state seen is in the error), so a test
 * orders its requests by what the server did with them rather than by sleeping. Generous
 * deadline: a loaded machine is slow, and a pass returns at once.
 */
export async function waitForWorkers(svc: TestServer, what: string, check: (state: PdfWorkers) => boolean, timeoutMs = 60_000): Promise<PdfWorkers> {
  let last: PdfWorkers | undefined;
  return waitUntil(
    () => `${what} (last seen: ${JSON.stringify(last)})`,
    async () => {
      last = await pdfWorkers(svc);
      return check(last) && last;
    },
    { timeoutMs, intervalMs: 25 },
  );
}

/** Every worker up and idle: started, warmed up, nothing running or waiting. */
export const idle = (workers: number) => (state: PdfWorkers) => state.threads === workers && state.starting === 0 && state.busy === 0 && state.waiting === 0;

/**
 * Documents that hold their worker until the test opens their gate (helpers/slow-pdf-worker.ts,
 * which must be the server's worker module, with SVC_TEST_PDF_WORKER_GATES set to `directory`
 * before the server starts): the real worker parses them, then the worker stays busy.
 */
export function pdfGates() {
  const directory = mkdtempSync(join(tmpdir(), 'svc-pdf-gates-'));
  return {
    directory,
    /** A one-page document that holds its worker until `open(name)`. */
    held: (name: string) => textPdf([[`Held until gate ${name} opens.`]], { title: `svc-test-hold ${name}` }),
    open: (name: string) => writeFileSync(join(directory, name), ''),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
