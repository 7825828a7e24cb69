import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { runCli } from './helpers/run-cli.ts';

let svc: TestServer;
let env: Record<string, string>;
const directory = mkdtempSync(path.join(tmpdir(), 'svc-pdf-cli-'));
const pdfFile = path.join(directory, 'three-pages.pdf');
const markdownFile = path.join(directory, 'notes.md');

test.before(async () => {
  // Several CLI processes start at once on a small machine; the pool's limits have their own tests.
  svc = await startTestServer({ env: { SVC_PDF_RATE_LIMIT: '0', SVC_PDF_MAX_PENDING: '16', SVC_PDF_QUEUE_TIMEOUT_MS: '30000' } });
  env = { SVC_BASE_URL: svc.baseUrl, SVC_TOKEN: svc.operatorToken };
  writeFileSync(pdfFile, numberedPdf(3));
  writeFileSync(markdownFile, '# Notes\n\nFirst.\n\n## More\n\nSecond.\n');
});
test.after.always(async () => {
  await svc?.close();
});

test('svc pdf extract prints page text separated by form feeds, and a summary on stderr', async (t) => {
  const run = await runCli(['pdf', 'extract', pdfFile, '--max-pages', '2'], { env });
  t.is(run.code, 0, run.stderr);
  const pages = run.stdout.split('\f');
  t.is(pages.length, 2);
  t.regex(pages[0]!, /^Page 1 line 1/);
  t.regex(pages[1]!, /^Page 2 line 1/);
  t.regex(run.stderr, /2 of 3 pages, \d+ characters, truncated by max_pages \(pdfium\)/);
});

test('svc pdf extract --jsonl prints one object per page as it arrives, then the summary', async (t) => {
  const run = await runCli(['pdf', 'extract', pdfFile, '--jsonl', '--start-page', '2'], { env });
  t.is(run.code, 0, run.stderr);
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.deepEqual(
    lines.map((line) => [line.type, line.page_number ?? line.page_count]),
    [
      ['page', 2],
      ['page', 3],
      ['summary', 3],
    ],
  );
});

test('svc pdf extract --json prints the whole extraction', async (t) => {
  const run = await runCli(['pdf', 'extract', pdfFile, '--json', '--max-chars', '10'], { env });
  t.is(run.code, 0, run.stderr);
  const body = JSON.parse(run.stdout);
  t.is(body.char_count, 10);
  t.is(body.truncated_reason, 'max_chars');
});

test("svc pdf extract: a bad flag, or one past the contract's bound, is a usage error (2); a refused file fails with its code (1)", async (t) => {
  const usage = await runCli(['pdf', 'extract', pdfFile, '--max-pages', 'many'], { env });
  t.is(usage.code, 2);
  t.regex(usage.stderr, /--max-pages takes a whole number/);
  const bounds = await runCli(['pdf', 'extract', pdfFile, '--max-pages', '101'], { env });
  t.is(bounds.code, 2, "the route's own query schema refuses it before the file is sent");
  t.regex(bounds.stderr, /--max-pages must be an integer from 1 to 100/);
  const refused = await runCli(['pdf', 'extract', markdownFile], { env });
  t.is(refused.code, 1);
  t.regex(refused.stderr, /pdf_invalid, HTTP 422/);
});

test('svc doc extract prints sections with their headings', async (t) => {
  const run = await runCli(['doc', 'extract', markdownFile], { env });
  t.is(run.code, 0, run.stderr);
  t.is(run.stdout, '# Notes\n\nFirst.\n\n## More\n\nSecond.\n');
  const json = await runCli(['doc', 'extract', pdfFile, '--json'], { env });
  t.is(json.code, 0, json.stderr);
  t.deepEqual(
    JSON.parse(json.stdout).sections.map((section: { page_number: number }) => section.page_number),
    [1, 2, 3],
  );
});
