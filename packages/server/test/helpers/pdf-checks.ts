import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ExecutionContext } from 'ava';
import type { SvcClient } from '@svc/client';
import type { PdfEngineName } from '../../src/features/pdf/worker/engine.ts';
import { encryptedPdf, garbagePdf, passwordPdf, textPdf } from '@svc/testing/pdf-fixtures';

/**
 * The contract every engine answers the same way: pages in order, hyphenation joined by the
 * normaliser, metadata and layout; the file is given as a path, so the client streams it from disk.
 */
export async function checkEngineContract(t: ExecutionContext, client: SvcClient, engine: PdfEngineName): Promise<void> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), `svc-${engine}-`)), 'doc.pdf');
  writeFileSync(file, textPdf([['Hello from a retrie-', 'val test.'], ['Page two.']], { title: `${engine} title` }));
  const result = await client.pdf.extractFile(file);
  t.is(result.engine, engine);
  t.is(result.page_count, 2);
  t.is(result.pages[0]!.text, 'Hello from a retrieval test.');
  t.is(result.pages[1]!.text, 'Page two.');
  t.is(result.metadata.title, `${engine} title`);
  t.is(result.pages[0]!.layout?.width, 612);
}

/** An encrypted file without its password is `pdf_encrypted`; noise after `%PDF-` is `pdf_invalid`. */
export async function checkEngineRefusals(t: ExecutionContext, client: SvcClient): Promise<void> {
  const encrypted = await t.throwsAsync(client.pdf.extractFile(new Uint8Array(encryptedPdf())));
  t.is((encrypted as { code?: string }).code, 'pdf_encrypted');
  const broken = await t.throwsAsync(client.pdf.extractFile(new Uint8Array(garbagePdf())));
  t.is((broken as { code?: string }).code, 'pdf_invalid');
}

/**
 * The password round trip every engine must pass on the JSON route: the right password opens
 * the file, a wrong one is `pdf_password_incorrect`, none is `pdf_encrypted`.
 */
export async function checkPasswordRoundTrip(t: ExecutionContext, client: SvcClient): Promise<void> {
  const data_base64 = passwordPdf('s3cret', 'Behind the password').toString('base64');
  const opened = (await client.pdf.extract({ body: { data_base64, password: 's3cret' } })) as { pages: Array<{ text: string }> };
  t.is(opened.pages[0]!.text, 'Behind the password');
  const wrong = await t.throwsAsync(client.pdf.extract({ body: { data_base64, password: 'guess' } }));
  t.is((wrong as { code?: string }).code, 'pdf_password_incorrect');
  const missing = await t.throwsAsync(client.pdf.extract({ body: { data_base64 } }));
  t.is((missing as { code?: string }).code, 'pdf_encrypted');
}
