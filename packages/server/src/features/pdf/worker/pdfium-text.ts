import type { WrappedPdfiumModule } from '@embedpdf/pdfium';
import { PARAGRAPH_GAP_LINES } from './engine.ts';

/**
 * A page's text from PDFium's text page. PDFium orders characters and marks line ends itself
 * (`\r\n`, generated); what it does not mark is paragraphs, so, as with pdf.js, a baseline jump of
 * more than PARAGRAPH_GAP_LINES times the font size between two lines starts one (`\n\n`).
 */

export function pdfiumPageText(module: WrappedPdfiumModule, page: number): string {
  const textPage = module.FPDFText_LoadPage(page);
  if (!textPage) throw new Error('the page has no text layer PDFium can read');
  const { malloc, free } = module.pdfium.wasmExports;
  let buffer = 0;
  let origin = 0;
  try {
    const count = module.FPDFText_CountChars(textPage);
    if (count <= 0) return '';
    // FPDFText_GetText writes UCS-2, one unit per character, and a terminator.
    buffer = malloc((count + 1) * 2);
    origin = malloc(16);
    if (!buffer || !origin) throw new Error('no memory for the page text');
    const written = module.FPDFText_GetText(textPage, 0, count, buffer);
    const raw = module.pdfium.UTF16ToString(buffer, Math.max(0, written - 1) * 2);
    const baseline = (index: number) =>
      module.FPDFText_GetCharOrigin(textPage, index, origin, origin + 8) ? module.pdfium.getValue(origin + 8, 'double') : undefined;
    let text = '';
    let start = 0;
    let lastY: number | undefined;
    let lastSize = 0;
    for (const line of raw.split(/\r\n|\r|\n/)) {
      const lineStart = start;
      start += line.length + (raw.startsWith('\r\n', start + line.length) ? 2 : 1);
      const first = line.search(/\S/);
      if (first < 0) continue;
      const y = baseline(lineStart + first);
      const size = module.FPDFText_GetFontSize(textPage, lineStart + first);
      if (text !== '') {
        const gap = lastY === undefined || y === undefined ? 0 : Math.abs(lastY - y);
        text += gap > PARAGRAPH_GAP_LINES * Math.max(lastSize, size, 1) ? '\n\n' : '\n';
      }
      // PDFium joins a word hyphenated across a line end and marks the hyphen U+FFFE; the line
      // break goes back in, and the normaliser decides whether to join, as for every engine.
      text += line.replaceAll('\uFFFE', '-\n');
      if (y !== undefined) lastY = y;
      lastSize = size;
    }
    return text;
  } finally {
    if (buffer) free(buffer);
    if (origin) free(origin);
    module.FPDFText_ClosePage(textPage);
  }
}
