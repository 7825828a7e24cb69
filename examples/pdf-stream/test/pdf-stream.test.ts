import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { run } from '@svc/testing/run';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const HERE = fileURLToPath(new URL('..', import.meta.url));
let svc: TestServer;
let pdfFile: string;
let dir: string;
test.before(async () => {
  svc = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), 'svc-example-pdf-'));
  pdfFile = path.join(dir, 'numbered.pdf');
  await writeFile(pdfFile, numberedPdf(6));
});
test.after.always(async () => {
  await svc?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const env = () => ({ SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken });

test('the pdf-stream example prints each page as it streams, then the summary', async (t) => {
  const result = await run(process.execPath, [MAIN, pdfFile, '--max-pages', '5'], { cwd: HERE, env: env(), timeoutMs: 60_000 });
  t.is(result.code, 0, result.stderr);
  const lines = result.stdout.trim().split('\n');
  t.deepEqual(
    lines.slice(0, 5).map((line) => /^page (\d+): \d+ chars {2}Page \1 line 1 of the numbered test document\.$/.exec(line)?.[1]),
    ['1', '2', '3', '4', '5'],
  );
  t.regex(lines[5]!, /^done: 5 of 6 pages, \d+ chars, engine \S+, truncated \(max_pages\)$/);
});

test('breaking out of the stream stops it; a bad file or a missing token fails with the code', async (t) => {
  const stopped = await run(process.execPath, [MAIN, pdfFile, '--stop-after', '2'], { cwd: HERE, env: env(), timeoutMs: 60_000 });
  t.is(stopped.code, 0, stopped.stderr);
  t.deepEqual(stopped.stdout.trim().split('\n').slice(-1), ['stopped after 2 pages']);

  const garbage = path.join(dir, 'not-a.pdf');
  await writeFile(garbage, 'this is not a PDF at all');
  const bad = await run(process.execPath, [MAIN, garbage], { cwd: HERE, env: env(), timeoutMs: 60_000 });
  t.is(bad.code, 1);
  t.regex(bad.stderr, /^extraction failed: pdf_invalid: /m);

  const anonymous = await run(process.execPath, [MAIN, pdfFile], { cwd: HERE, env: { SVC_BASE_URL: svc.baseUrl }, timeoutMs: 60_000 });
  t.is(anonymous.code, 1);
  t.regex(anonymous.stderr, /^extraction failed: unauthorized: /m);
});
