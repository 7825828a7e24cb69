import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';

/**
 * Builds small PDFs byte by byte for the tests: well-formed text documents, and hostile ones
 * (truncated, garbage, bombs, deep nesting, reference cycles, huge page trees, encrypted).
 * Written by hand so every byte is known; nothing here is a mock of our own code.
 */

type PdfObject = string | Buffer;

/** Serialises numbered objects (1..n) with a correct cross-reference table. */
export function assemblePdf(objects: PdfObject[], options: { rootId?: number; trailerExtra?: string; version?: string } = {}): Buffer {
  const chunks: Buffer[] = [Buffer.from(`%PDF-${options.version ?? '1.7'}\n%\xE2\xE3\xCF\xD3\n`, 'latin1')];
  let length = chunks[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(length);
    const chunk = Buffer.concat([
      Buffer.from(`${index + 1} 0 obj\n`),
      typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
      Buffer.from('\nendobj\n'),
    ]);
    chunks.push(chunk);
    length += chunk.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`)].join(
    '',
  );
  chunks.push(
    Buffer.from(
      `${xref}trailer\n<< /Size ${objects.length + 1} /Root ${options.rootId ?? 1} 0 R ${options.trailerExtra ?? ''}>>\nstartxref\n${length}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(chunks);
}

const escapePdfString = (text: string) => text.replace(/[\\()]/g, (c) => `\\${c}`);

function stream(content: Buffer | string, compress = false): Buffer {
  const data = typeof content === 'string' ? Buffer.from(content, 'latin1') : content;
  const body = compress ? deflateSync(data) : data;
  return Buffer.concat([Buffer.from(`<< /Length ${body.length}${compress ? ' /Filter /FlateDecode' : ''} >>\nstream\n`), body, Buffer.from('\nendstream')]);
}

/** A document whose page i shows the lines of `pages[i]`, in Helvetica. */
export function textPdf(pages: string[][], info: { title?: string; author?: string } = {}): Buffer {
  // 1 catalog, 2 pages, 3 font, 4 info, then (page, content) pairs.
  const objects: PdfObject[] = [];
  const pageIds = pages.map((_, index) => 5 + index * 2);
  objects.push('<< /Type /Catalog /Pages 2 0 R >>');
  objects.push(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  objects.push(
    `<< ${info.title ? `/Title (${escapePdfString(info.title)}) ` : ''}${info.author ? `/Author (${escapePdfString(info.author)}) ` : ''}/Producer (svc test fixtures) /CreationDate (D:20240131120000Z) >>`,
  );
  pages.forEach((lines, index) => {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[index]! + 1} 0 R >>`);
    const ops = lines.map((line, lineIndex) => `BT /F1 12 Tf 72 ${720 - lineIndex * 16} Td (${escapePdfString(line)}) Tj ET`).join('\n');
    objects.push(stream(ops));
  });
  return assemblePdf(objects, { trailerExtra: '/Info 4 0 R' });
}

/** `count` pages, each with one line naming it. */
export function numberedPdf(count: number, linesPerPage = 1): Buffer {
  return textPdf(
    Array.from({ length: count }, (_, page) =>
      Array.from({ length: linesPerPage }, (_, line) => `Page ${page + 1} line ${line + 1} of the numbered test document.`),
    ),
  );
}

/** A page whose content stream is `operations` text-show operators: slow to extract on purpose. */
export function slowPdf(pages: number, operationsPerPage: number, options: { shortText?: boolean } = {}): Buffer {
  // One-character strings cost the engine about the same work but add few characters, so a
  // long document of them is not cut short by max_chars.
  const line = Array.from(
    { length: operationsPerPage },
    (_, index) => `BT /F1 6 Tf ${((index * 7) % 540) + 36} ${((index * 13) % 720) + 36} Td (${options.shortText ? 'w' : `w${index % 1000}`}) Tj ET`,
  ).join('\n');
  const objects: PdfObject[] = ['<< /Type /Catalog /Pages 2 0 R >>'];
  const pageIds = Array.from({ length: pages }, (_, index) => 4 + index);
  objects.push(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const contentId = 4 + pages;
  for (let index = 0; index < pages; index += 1)
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentId} 0 R >>`);
  objects.push(stream(line, true));
  return assemblePdf(objects);
}

/** The first `fraction` of a good document: no trailer, no xref. */
export function truncatedPdf(fraction = 0.5): Buffer {
  const whole = numberedPdf(3);
  return whole.subarray(0, Math.floor(whole.length * fraction));
}

/** `%PDF-` and then noise. */
export function garbagePdf(bytes = 4096): Buffer {
  let seed = 42;
  const noise = Buffer.alloc(bytes);
  for (let index = 0; index < bytes; index += 1) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    noise[index] = seed & 0xff;
  }
  return Buffer.concat([Buffer.from('%PDF-1.7\n'), noise]);
}

/** One page whose content stream inflates from about 1/1000 of its size to `inflatedBytes` of spaces (a zip bomb). */
export function decompressionBombPdf(inflatedBytes = 128 * 1024 * 1024): Buffer {
  const compressed = deflateSync(Buffer.alloc(inflatedBytes, 0x20), { level: 9 });
  const objects: PdfObject[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
    Buffer.concat([Buffer.from(`<< /Length ${compressed.length} /Filter /FlateDecode >>\nstream\n`), compressed, Buffer.from('\nendstream')]),
  ];
  return assemblePdf(objects);
}

/** A page dictionary nested `depth` arrays deep in its resources. */
export function deeplyNestedPdf(depth = 100_000): Buffer {
  const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Deep ${nested} >>`,
  ]);
}

/** A page tree whose Kids point back at its own ancestors. */
export function referenceCyclePdf(): Buffer {
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 2 >>',
    '<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 3 0 R] /Count 2 >>',
  ]);
}

/** A page tree that claims `count` pages through one shared kid (a huge declared count). */
export function hugePageTreePdf(count = 10_000_000): Buffer {
  const kids = Array.from({ length: 2000 }, () => '4 0 R').join(' ');
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [3 0 R] /Count ${count} >>`,
    `<< /Type /Pages /Parent 2 0 R /Kids [${kids}] /Count ${count} >>`,
    '<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] >>',
  ]);
}

/** Standard security handler revision 2 with a non-empty user password: unreadable without it. */
export function encryptedPdf(): Buffer {
  // /O and /U values from a real RC4-40 file with user password "secret"; the content is never decrypted.
  const o = '<' + 'a'.repeat(64) + '>';
  const u = '<' + 'b'.repeat(64) + '>';
  return assemblePdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
      `<< /Filter /Standard /V 1 /R 2 /O ${o} /U ${u} /P -44 >>`,
    ],
    { trailerExtra: '/Encrypt 4 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]' },
  );
}

/** A valid document padded with a trailing comment to exactly `size` bytes. */
export function pdfOfSize(size: number): Buffer {
  const base = numberedPdf(1);
  if (size < base.length + 2) throw new Error('size too small');
  return Buffer.concat([base, Buffer.from('%'), Buffer.alloc(size - base.length - 2, 0x41), Buffer.from('\n')]);
}

/** A page whose content stream holds one array of `numbers` zeros: the parser's heap grows fast. */
export function memoryHogPdf(numbers = 40_000_000): Buffer {
  const content = Buffer.concat([Buffer.from('BT /F1 12 Tf 72 720 Td ['), Buffer.alloc(numbers * 2, '0 '), Buffer.from('] TJ ET')]);
  return assemblePdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    stream(content, true),
  ]);
}

/**
 * Pages that each take seconds of engine work but yield no text (four million font selections
 * per page), so neither max_chars nor a fast machine ends the parse early: it always meets the
 * parse deadline. Measured on a quiet machine: about 0.3 µs per operator with PDFium (1.2 s a
 * page), about 2 µs with pdf.js.
 */
export function endlessPdf(pages = 100, operationsPerPage = 4_000_000): Buffer {
  const content = Array.from({ length: operationsPerPage }, (_, index) => `BT /F1 ${index % 500} Tf ET`).join('\n');
  const objects: PdfObject[] = ['<< /Type /Catalog /Pages 2 0 R >>'];
  const pageIds = Array.from({ length: pages }, (_, index) => 4 + index);
  objects.push(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages} >>`);
  objects.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  for (let index = 0; index < pages; index += 1)
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${4 + pages} 0 R >>`);
  objects.push(stream(content, true));
  return assemblePdf(objects);
}

function rc4(key: Buffer, data: Buffer): Buffer {
  const state = Array.from({ length: 256 }, (_, index) => index);
  for (let i = 0, j = 0; i < 256; i += 1) {
    j = (j + state[i]! + key[i % key.length]!) & 0xff;
    [state[i], state[j]] = [state[j]!, state[i]!];
  }
  const out = Buffer.alloc(data.length);
  for (let index = 0, i = 0, j = 0; index < data.length; index += 1) {
    i = (i + 1) & 0xff;
    j = (j + state[i]!) & 0xff;
    [state[i], state[j]] = [state[j]!, state[i]!];
    out[index] = data[index]! ^ state[(state[i]! + state[j]!) & 0xff]!;
  }
  return out;
}

const PASSWORD_PADDING = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');
const padPassword = (password: string) => Buffer.concat([Buffer.from(password, 'latin1'), PASSWORD_PADDING]).subarray(0, 32);
const md5 = (...parts: Buffer[]) => createHash('md5').update(Buffer.concat(parts)).digest();

/**
 * A one-page text PDF encrypted with the standard security handler, revision 2 (RC4, 40-bit),
 * opened by `userPassword`: the algorithms of ISO 32000-1 section 7.6.3, written out so the test
 * knows every byte. Its page says `text`.
 */
export function passwordPdf(userPassword: string, text: string, ownerPassword = 'owner-secret'): Buffer {
  const id = Buffer.from('0123456789abcdef0123456789abcdef', 'hex');
  const permissions = -44;
  const o = rc4(md5(padPassword(ownerPassword)).subarray(0, 5), padPassword(userPassword));
  const p = Buffer.alloc(4);
  p.writeInt32LE(permissions);
  const key = md5(padPassword(userPassword), o, p, id).subarray(0, 5);
  const u = rc4(key, PASSWORD_PADDING);
  const objectKey = (number: number) => md5(key, Buffer.from([number & 0xff, (number >> 8) & 0xff, (number >> 16) & 0xff, 0, 0])).subarray(0, 10);
  const content = rc4(objectKey(5), Buffer.from(`BT /F1 12 Tf 72 720 Td (${text}) Tj ET`, 'latin1'));
  return assemblePdf(
    [
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
      '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
      Buffer.concat([Buffer.from(`<< /Length ${content.length} >>\nstream\n`), content, Buffer.from('\nendstream')]),
      `<< /Filter /Standard /V 1 /R 2 /O <${o.toString('hex')}> /U <${u.toString('hex')}> /P ${permissions} >>`,
    ],
    { trailerExtra: `/Encrypt 6 0 R /ID [<${id.toString('hex')}> <${id.toString('hex')}>]` },
  );
}
