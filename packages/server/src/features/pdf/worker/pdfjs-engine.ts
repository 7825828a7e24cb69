import { createRequire } from 'node:module';
import path from 'node:path';
import { cleanMetadata, infoDictionaryMetadata, PARAGRAPH_GAP_LINES, PdfEngineError, type EnginePage, type OpenedPdf, type PdfEngine } from './engine.ts';

/**
 * pdf.js (pdfjs-dist legacy build, Apache-2.0), selected with SVC_PDF_ENGINE=pdfjs (PDFium is the
 * default: two to three times faster here). Licence-safe for a
 * self-hosted service, no native code, one text string per page. Character maps, standard
 * fonts and the image decoders' WASM are read from the package on disk (filesystem paths,
 * never a network fetch); pages are cleaned up as they are read and the loading task is
 * destroyed at the end so a long-lived worker does not accumulate memory.
 */
const require = createRequire(import.meta.url);
const packageRoot = path.dirname(require.resolve('pdfjs-dist/package.json'));
const asDirectory = (name: string) => `${path.join(packageRoot, name)}${path.sep}`;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let loaded: Promise<PdfJs> | undefined;
const loadPdfJs = () => (loaded ??= import('pdfjs-dist/legacy/build/pdf.mjs'));

interface TextItem {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

/** Joins text items into lines; a vertical jump of more than PARAGRAPH_GAP_LINES line heights starts a paragraph. */
function itemsToText(items: readonly unknown[]): string {
  let text = '';
  let lastY: number | undefined;
  let lastHeight = 0;
  for (const raw of items) {
    const item = raw as Partial<TextItem>;
    if (typeof item.str !== 'string') continue;
    const y = item.transform?.[5];
    if (lastY !== undefined && y !== undefined && item.str !== '') {
      const gap = Math.abs(lastY - y);
      const lineHeight = Math.max(lastHeight, item.height ?? 0, 1);
      if (gap > lineHeight * PARAGRAPH_GAP_LINES && !text.endsWith('\n\n')) text += text.endsWith('\n') ? '\n' : '\n\n';
      else if (gap > lineHeight * 0.5 && !text.endsWith('\n') && !text.endsWith(' ')) text += '\n';
    }
    text += item.str;
    if (item.hasEOL) text += '\n';
    if (item.str !== '' && y !== undefined) {
      lastY = y;
      lastHeight = item.height ?? lastHeight;
    }
  }
  return text;
}

export const pdfjsEngine: PdfEngine = {
  name: 'pdfjs',
  async open(bytes, password): Promise<OpenedPdf> {
    const pdfjs = await loadPdfJs();
    const loadingTask = pdfjs.getDocument({
      data: bytes,
      password,
      cMapUrl: asDirectory('cmaps'),
      cMapPacked: true,
      standardFontDataUrl: asDirectory('standard_fonts'),
      wasmUrl: asDirectory('wasm'),
      useSystemFonts: false,
      disableFontFace: true,
      isOffscreenCanvasSupported: false,
      verbosity: pdfjs.VerbosityLevel.ERRORS,
    });
    let document: Awaited<typeof loadingTask.promise>;
    try {
      document = await loadingTask.promise;
    } catch (error) {
      await loadingTask.destroy().catch(() => {});
      const name = (error as { name?: string }).name;
      const code = (error as { code?: number }).code;
      if (name === 'PasswordException') {
        throw code === pdfjs.PasswordResponses.INCORRECT_PASSWORD && password !== undefined
          ? new PdfEngineError('pdf_password_incorrect', 'The password does not open this PDF.')
          : new PdfEngineError('pdf_encrypted', 'The PDF is encrypted; send its password.');
      }
      throw new PdfEngineError(
        'pdf_invalid',
        `The file is not a readable PDF (${name === 'InvalidPDFException' ? 'no valid structure' : 'unreadable structure'}).`,
      );
    }
    return {
      pageCount: document.numPages,
      async metadata() {
        const { info } = (await document.getMetadata()) as { info: Record<string, unknown> };
        const field = (key: string) => (typeof info?.[key] === 'string' ? (info[key] as string) : undefined);
        return cleanMetadata({
          ...infoDictionaryMetadata(field),
          pdf_version: field('PDFFormatVersion'),
          language: field('Language'),
        });
      },
      async page(pageNumber): Promise<EnginePage> {
        const page = await document.getPage(pageNumber);
        try {
          const content = await page.getTextContent({ includeMarkedContent: false, disableNormalization: false });
          const [x0 = 0, y0 = 0, x1 = 0, y1 = 0] = page.view;
          return { text: itemsToText(content.items), width: Math.abs(x1 - x0), height: Math.abs(y1 - y0), rotation: page.rotate };
        } finally {
          page.cleanup();
        }
      },
      async close() {
        await loadingTask.destroy();
      },
    };
  },
};
