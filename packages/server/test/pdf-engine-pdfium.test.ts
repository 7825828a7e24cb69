import test from 'ava';
import { pdfiumEngine } from '../src/features/pdf/worker/pdfium-engine.ts';
import { pdfiumRuntime } from '../src/features/pdf/worker/pdfium-runtime.ts';
import { normaliseText } from '../src/features/pdf/worker/normalise-text.ts';
import { assemblePdf, decompressionBombPdf, pdfOfSize, textPdf } from '@svc/testing/pdf-fixtures';

/**
 * The PDFium engine in-process (it is what a parser worker runs): text layout, page geometry,
 * freeing every handle, and the ceiling on its WASM memory. The HTTP contract, hostile files and
 * the pool's limits run over it as the default engine in pdf-extract, pdf-corpus and pdf-limits.
 */
const MiB = 1024 * 1024;
const open = (pdf: Buffer, memoryLimitBytes = 256 * MiB) => pdfiumEngine.open(new Uint8Array(pdf), undefined, { memoryLimitBytes });

test.serial('lines end in \\n, a paragraph gap is \\n\\n, and a hyphenated line end is given back to the normaliser', async (t) => {
  const document = await open(textPdf([['First line of one', 'paragraph continues here.', '', 'A second paragraph.', 'A retrie-', 'val test.']]));
  const page = await document.page(1);
  await document.close();
  t.is(page.text, 'First line of one\nparagraph continues here.\n\nA second paragraph.\nA retrie-\nval test.');
  t.is(normaliseText(page.text), 'First line of one\nparagraph continues here.\n\nA second paragraph.\nA retrieval test.');
});

test.serial('page size is the unrotated page with its rotation; the catalogue language and the PDF version are read', async (t) => {
  const rotated = assemblePdf(
    [
      '<< /Type /Catalog /Pages 2 0 R /Lang (de-CH) >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 500] /Rotate 90 >>',
    ],
    { version: '1.4' },
  );
  const document = await open(rotated);
  t.like(await document.page(1), { text: '', width: 300, height: 500, rotation: 90 });
  t.deepEqual(await document.metadata(), { pdf_version: '1.4', language: 'de-CH' });
  await document.close();
});

test.serial('every handle and the copied input are freed: 60 documents of 2 MB leave the WASM memory where one left it', async (t) => {
  const pdf = pdfOfSize(2_000_000);
  const readAll = async () => {
    const document = await open(pdf, 805306368);
    await document.metadata();
    for (let page = 1; page <= document.pageCount; page += 1) await document.page(page);
    await document.close();
  };
  await readAll();
  const runtime = await pdfiumRuntime();
  const after = runtime.memoryBytes();
  for (let round = 0; round < 60; round += 1) await readAll();
  t.is(await pdfiumRuntime(), runtime, 'the same instance served every document');
  t.is(runtime.memoryBytes(), after, 'one leaked input copy per document would add 120 MB');
});

test.serial('WASM memory past 60% of the worker cap is refused: pdf_too_complex, and the next document gets a fresh instance', async (t) => {
  // 256 MiB cap: PDFium may use 153.6 MiB. A 32 MiB content stream fits; a 256 MiB one cannot.
  const fits = await open(decompressionBombPdf(32 * MiB));
  t.is((await fits.page(1)).text, '');
  await fits.close();
  const before = await pdfiumRuntime();
  const error = await t.throwsAsync(async () => {
    const bomb = await open(decompressionBombPdf(256 * MiB));
    try {
      await bomb.page(1);
    } finally {
      await bomb.close();
    }
  });
  t.is((error as { code?: string }).code, 'pdf_too_complex');
  t.true(before.broken);
  const fresh = await pdfiumRuntime();
  t.not(fresh, before);
  t.true(fresh.memoryBytes() < 64 * MiB, `fresh instance holds ${fresh.memoryBytes()} bytes`);
  const next = await open(textPdf([['Still reading.']]));
  t.is((await next.page(1)).text, 'Still reading.');
  await next.close();
});
