/**
 * Markdown in /v1/document/extract at the contract's largest text (16 MiB): the shapes that drove
 * the old regular expressions into backtracking (an ATX heading with a long space run, runs of
 * `![`, `[a](` and `**a `) come back with the right sections instead of holding the server for
 * seconds to hours, and ordinary Markdown reads as it did.
 */
import test from 'ava';
import { DocumentExtractRequest, pdfLimits } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_OPEN_ACCESS: 'true' } });
});
test.after.always(async () => {
  await svc?.close();
});

const maxText = (DocumentExtractRequest.shape.text.unwrap() as unknown as { maxLength: number }).maxLength;
const fill = (unit: string, tail = '') => unit.repeat(Math.floor((maxText - tail.length) / unit.length)) + tail;
const extract = (text: string, maxChars = 400_000) => svc.operator.documents.extract({ body: { text, format: 'markdown', max_chars: maxChars } });

test.serial('the largest text the contract admits is 16 MiB', (t) => {
  t.is(maxText, 16_777_216);
});

test.serial('an ATX heading with a 16 MiB space run before a last word is one heading, cut to its first characters', async (t) => {
  const doc = await extract(`# a${' '.repeat(maxText - 9)}x\nbody`);
  // The cut falls inside the space run, which a heading does not end with.
  t.deepEqual(
    doc.sections.map((section) => [section.heading, section.level, section.text]),
    [['a', 1, 'body']],
  );
  t.is(doc.metadata.title, 'a');
});

test.serial('a 16 MiB heading comes back as its first pdfLimits.maxHeadingChars characters, in the sections and the title', async (t) => {
  const word = fill('Zq9', '\nbody').slice(0, -'\nbody'.length);
  const doc = await extract(`# ${word}\nbody`);
  t.deepEqual(
    doc.sections.map((section) => [section.heading, section.text]),
    [[word.slice(0, pdfLimits.maxHeadingChars), 'body']],
  );
  t.is(doc.metadata.title, word.slice(0, pdfLimits.maxHeadingChars));
  // A cut between the halves of a surrogate pair would answer a lone surrogate: the pair goes whole.
  const emoji = await extract(`# ${'x'.repeat(pdfLimits.maxHeadingChars - 1)}\u{1F600}tail`);
  t.is(emoji.sections[0]!.heading, 'x'.repeat(pdfLimits.maxHeadingChars - 1));
});

test.serial('16 MiB of `![` with no closer stays text, after an image that keeps only its alt text', async (t) => {
  const doc = await extract(fill('![', '').replace(/^.{16}/, '![alt](pic.png) '), 1_000);
  t.is(doc.section_count, 1);
  t.is(doc.sections[0]!.heading, null);
  t.true(doc.sections[0]!.text.startsWith('alt ![![!['));
  t.true(doc.truncated);
});

test.serial('16 MiB of `**a ` or `__a ` on one line is left as it is; of `[a](`, the unclosed links too', async (t) => {
  for (const unit of ['**a ', '__a ', '[a](', 'a](![']) {
    const doc = await extract(fill(unit), 1_000);
    t.is(doc.section_count, 1, unit);
    t.is(doc.sections[0]!.text, fill(unit).slice(0, 1_000).trimStart().slice(0, 1_000), unit);
  }
});

test.serial('CRLF line ends, as many as the body limit admits, make no sections', async (t) => {
  // JSON spells CR LF in 4 bytes: about 11 MiB of them fit the body limit.
  const blank = await extract('\r\n'.repeat(5_000_000));
  t.is(blank.section_count, 0);
});

test.serial('ordinary Markdown: closing hashes, setext, images, links and strong marks as before', async (t) => {
  const markdown = [
    '## Closed heading ##',
    'An ![alt text](pic.png) beside a [link](https://example.org/a_(b)) and **bold words** and __under__ and ** not bold **.',
    '',
    'Second',
    '======',
    'Lines\r\nwith CRLF and a lone\rCR, plus #hashtag and ####### seven.',
    '```',
    '## fenced',
    '```',
  ].join('\n');
  const doc = await svc.operator.documents.extract({ body: { text: markdown, filename: 'notes.md' } });
  t.is(doc.format, 'markdown');
  t.deepEqual(
    doc.sections.map((section) => [section.heading, section.level, section.text]),
    [
      ['Closed heading', 2, 'An alt text beside a link) and bold words and under and ** not bold **.'],
      ['Second', 1, 'Lines\nwith CRLF and a lone\nCR, plus #hashtag and ####### seven.\n```\n## fenced\n```'],
    ],
  );
  t.is(doc.metadata.title, 'Second');
});
