import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { docxFile } from '@svc/testing/docx-fixture';
import { numberedPdf } from '@svc/testing/pdf-fixtures';

let svc: TestServer;
// The operator's own calls in this file (DOCX and PDF go through the workers) stay under it.
const RATE_LIMIT = 8;
test.before(async () => {
  // Open access lets the rate-limit test act as its own principal (`open`), apart from the operator.
  // A small worker memory cap (128 MiB) keeps the DOCX bomb below cheap to build.
  svc = await startTestServer({
    env: {
      SVC_OPEN_ACCESS: 'true',
      SVC_PDF_RATE_LIMIT: String(RATE_LIMIT),
      SVC_PDF_RATE_WINDOW_SECONDS: '86400',
      SVC_PDF_WORKER_MEMORY_BYTES: String(128 * 1024 * 1024),
      SVC_PDF_MAX_PENDING: '16',
      SVC_PDF_QUEUE_TIMEOUT_MS: '30000',
    },
  });
});
test.after.always(async () => {
  await svc?.close();
});

test('HTML: headings become sections; scripts and styles are dropped; title and author kept', async (t) => {
  const html = `<!doctype html><html lang="en"><head><title>The Guide</title><meta name="author" content="Ada"><style>p{color:red}</style></head>
    <body><p>Intro &amp; welcome.</p><script>alert(1)</script><h1>Install</h1><p>Run   the\n installer.</p><ul><li>one</li><li>two</li></ul>
    <h2>Options</h2><p>Use <b>--fast</b>.</p><pre>a  b\n  c</pre></body></html>`;
  const doc = await svc.operator.documents.extract({ body: { text: html } });
  t.is(doc.format, 'html');
  t.like(doc.metadata, { title: 'The Guide', author: 'Ada', language: 'en' });
  t.deepEqual(
    doc.sections.map((section) => [section.section_number, section.heading, section.level, section.page_number]),
    [
      [1, null, 0, null],
      [2, 'Install', 1, null],
      [3, 'Options', 2, null],
    ],
  );
  t.is(doc.sections[0]!.text, 'Intro & welcome.');
  t.is(doc.sections[1]!.text, 'Run the installer.\n\none\n\ntwo');
  t.is(doc.sections[2]!.text, 'Use --fast.\n\na b\nc');
  t.false(JSON.stringify(doc).includes('alert'));
  t.is(
    doc.char_count,
    doc.sections.reduce((sum, section) => sum + section.char_count, 0),
  );
});

test('Markdown: ATX and setext headings, code fences kept whole, links keep their text', async (t) => {
  const markdown =
    '# Title\n\nSome [linked](https://example.org) text with a \uFB01ne ligature.\n\nSetext\n------\n\n```\n# not a heading\n```\n\n### Deep\nend';
  const doc = await svc.operator.documents.extract({ body: { text: markdown, filename: 'notes.md' } });
  t.is(doc.format, 'markdown');
  t.is(doc.metadata.title, 'Title');
  t.deepEqual(
    doc.sections.map((section) => [section.heading, section.level]),
    [
      ['Title', 1],
      ['Setext', 2],
      ['Deep', 3],
    ],
  );
  t.is(doc.sections[0]!.text, 'Some linked text with a fine ligature.');
  t.true(doc.sections[1]!.text.includes('# not a heading'));
});

test('plain text is one section, normalised; max_chars cuts at the limit', async (t) => {
  const doc = await svc.operator.documents.extract({ body: { text: 'line one  \n\n\n\nline   two', format: 'text' } });
  t.deepEqual(
    doc.sections.map((section) => section.text),
    ['line one\n\nline two'],
  );
  const cut = await svc.operator.documents.extract({ body: { text: '# A\n\n0123456789\n\n# B\n\nabcdef', max_chars: 12 } });
  t.is(cut.char_count, 12);
  t.true(cut.truncated);
  t.is(cut.truncated_reason, 'max_chars');
  t.deepEqual(
    cut.sections.map((section) => section.text),
    ['0123456789', 'ab'],
  );
  t.is(cut.section_count, 2);
});

test('DOCX: heading styles become sections', async (t) => {
  const docx = docxFile([
    [null, 'Preface text.'],
    ['Heading1', 'Chapter One'],
    [null, 'First paragraph.'],
    ['Heading2', 'Detail'],
    [null, 'Second paragraph.'],
  ]);
  const doc = await svc.operator.documents.extract({ body: { data_base64: docx.toString('base64') } });
  t.is(doc.format, 'docx');
  t.deepEqual(
    doc.sections.map((section) => [section.heading, section.level, section.text]),
    [
      [null, 0, 'Preface text.'],
      ['Chapter One', 1, 'First paragraph.'],
      ['Detail', 2, 'Second paragraph.'],
    ],
  );
});

test('a DOCX bomb (200 MiB of XML in a small file) is stopped in its worker with 422 pdf_too_complex; the server keeps serving', async (t) => {
  const bomb = docxFile([[null, 'tiny']], { padBytes: 200 * 1024 * 1024 });
  t.true(bomb.length < 1024 * 1024, `${bomb.length} bytes`);
  const error = await t.throwsAsync(svc.operator.documents.extract({ body: { data_base64: bomb.toString('base64') } }));
  t.is((error as { code?: string }).code, 'pdf_too_complex');
  t.is((error as { status?: number }).status, 422);
  t.is((await fetch(`${svc.baseUrl}/healthz`)).status, 200);
  const small = await svc.operator.documents.extract({ body: { data_base64: docxFile([[null, 'still here']]).toString('base64') } });
  t.is(small.sections[0]!.text, 'still here');
});

test('a zip that is not a DOCX is a 422 document_invalid; unknown binary is document_format_unknown', async (t) => {
  const notDocx = Buffer.from('PK\u0003\u0004garbage', 'latin1');
  const error = await t.throwsAsync(svc.operator.documents.extract({ body: { data_base64: notDocx.toString('base64') } }));
  t.is((error as { code?: string }).code, 'document_invalid');
  const binary = Buffer.from([0, 1, 2, 3, 0, 255]);
  const unknown = await t.throwsAsync(svc.operator.documents.extract({ body: { data_base64: binary.toString('base64') } }));
  t.is((unknown as { code?: string }).code, 'document_format_unknown');
  t.is((unknown as { status?: number }).status, 422);
});

test('PDF by delegation: one section per page, from the PDF workers', async (t) => {
  const doc = await svc.operator.documents.extractFile(new Uint8Array(numberedPdf(3)), { maxPages: 2 });
  t.is(doc.format, 'pdf');
  t.is(doc.section_count, 3);
  t.deepEqual(
    doc.sections.map((section) => section.page_number),
    [1, 2],
  );
  t.true(doc.truncated);
  t.is(doc.truncated_reason, 'max_pages');
});

test('the per-principal rate limit: the limit passes, one more is 429 with Retry-After in the upload envelope', async (t) => {
  const pdf = new Uint8Array(numberedPdf(1));
  const call = () => fetch(`${svc.baseUrl}/v1/pdf/extract/upload`, { method: 'POST', headers: { 'content-type': 'application/pdf' }, body: pdf });
  for (let index = 0; index < RATE_LIMIT; index += 1) t.is((await call()).status, 200, `call ${index + 1}`);
  const refused = await call();
  t.is(refused.status, 429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  t.true(retryAfter >= 1 && retryAfter <= 86400, `Retry-After ${retryAfter}`);
  const body = await refused.json();
  t.is(body.code, 'rate_limited');
  t.true(body.retryable);
  t.is(body.retry_after_seconds, retryAfter);
  // Another principal (the operator) has its own budget.
  t.is((await svc.operator.pdf.extractFile(pdf)).pages_returned, 1);
});
