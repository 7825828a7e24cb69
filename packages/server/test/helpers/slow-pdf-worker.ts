import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ParseTask } from '../../src/features/pdf/worker/pdf-worker.ts';

/**
 * The real PDF parser worker, made slow on purpose (TestSeams.pdfWorkerModule).
 *
 * Delays: the control file named by SVC_TEST_PDF_WORKER_DELAYS holds
 * `{ "start": [ms...], "warmup": [ms...], "parse": [ms...] }`, one entry per thread start, per
 * warm-up and per parse, taken in order (none left, or no file named: no delay). A thread sleeps
 * its start delay before the real worker module loads, so Piscina hears nothing from it until
 * then. A warm-up or a parse runs the real one, then keeps its worker busy for its delay (an
 * engine slow to load, a parse of known length). A test that uses delays runs one worker, so
 * nothing races for the file.
 *
 * Gates: a document whose title is `svc-test-hold <name>` (heldPdf) is parsed by the real worker,
 * which then keeps its worker busy until the file `<name>` exists in the directory named by
 * SVC_TEST_PDF_WORKER_GATES (openGate). So a test decides when a worker frees, whatever the
 * machine's load, and any number of workers may hold at once.
 */
const control = process.env.SVC_TEST_PDF_WORKER_DELAYS;
const gates = process.env.SVC_TEST_PDF_WORKER_GATES;

function nextDelay(kind: 'start' | 'warmup' | 'parse'): number {
  if (!control) return 0;
  const delays = JSON.parse(readFileSync(control, 'utf8')) as Record<typeof kind, number[]>;
  const delay = delays[kind]?.shift() ?? 0;
  writeFileSync(control, JSON.stringify(delays));
  return delay;
}

/** The gate a document waits for: the name in its title `svc-test-hold <name>`, if any. */
function gateOf(bytes: Uint8Array): string | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return /\/Title \(svc-test-hold ([\w-]+)\)/.exec(text)?.[1];
}

await sleep(nextDelay('start'));
const real = await import('../../src/features/pdf/worker/pdf-worker.ts');

export default async function slowPdfWorker(task: ParseTask): Promise<boolean> {
  // Read before the real worker runs: the bytes may be handed on (detached) by the engine.
  const gate = task.warmup ? undefined : gateOf(task.bytes);
  const answer = await real.default(task);
  await sleep(nextDelay(task.warmup ? 'warmup' : 'parse'));
  if (gate) {
    if (!gates) throw new Error(`a held document (gate ${gate}) but SVC_TEST_PDF_WORKER_GATES names no directory`);
    while (!existsSync(join(gates, gate))) await sleep(10);
  }
  return answer;
}
