import { isMainThread } from 'node:worker_threads';
import { cleanMetadata, infoDictionaryMetadata, PdfEngineError, type EnginePage, type OpenedPdf, type PdfEngine } from './engine.ts';

/**
 * MuPDF through mupdf.js (WASM). Opt-in with SVC_PDF_ENGINE=mupdf: faster and the most robust on
 * malformed files, but licensed AGPL-3.0-or-later (or commercially from Artifex), which binds a
 * service that offers it to its users. Its heap is WASM memory, which V8's resourceLimits do not
 * count, so the worker checks the WASM memory size itself after each page.
 */
type MuPdf = typeof import('mupdf');
let loaded: Promise<MuPdf> | undefined;
const loadMuPdf = () => {
  // MuPDF prints every repair and warning through the console, which a worker thread forwards
  // to the server's stdout; a parser worker has nothing else to say there, so it stays quiet.
  if (!isMainThread) for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) console[method] = () => {};
  return (loaded ??= import('mupdf'));
};

export const mupdfEngine: PdfEngine = {
  name: 'mupdf',
  async open(bytes, password): Promise<OpenedPdf> {
    const mupdf = await loadMuPdf();
    let document: InstanceType<MuPdf['Document']>;
    try {
      document = mupdf.Document.openDocument(bytes, 'application/pdf');
    } catch {
      throw new PdfEngineError('pdf_invalid', 'The file is not a readable PDF (unreadable structure).');
    }
    if (document.needsPassword()) {
      if (password === undefined) {
        document.destroy();
        throw new PdfEngineError('pdf_encrypted', 'The PDF is encrypted; send its password.');
      }
      if (!document.authenticatePassword(password)) {
        document.destroy();
        throw new PdfEngineError('pdf_password_incorrect', 'The password does not open this PDF.');
      }
    }
    let pageCount: number;
    try {
      pageCount = document.countPages();
    } catch {
      document.destroy();
      throw new PdfEngineError('pdf_invalid', 'The file is not a readable PDF (no page tree).');
    }
    return {
      pageCount,
      async metadata() {
        const field = (key: string) => document.getMetaData(`info:${key}`) ?? undefined;
        return cleanMetadata({
          ...infoDictionaryMetadata(field),
          pdf_version: document.getMetaData('format')?.replace(/^PDF\s*/i, '') ?? undefined,
        });
      },
      async page(pageNumber): Promise<EnginePage> {
        const page = document.loadPage(pageNumber - 1);
        try {
          const text = page.toStructuredText('preserve-whitespace').asText();
          const [x0, y0, x1, y1] = page.getBounds();
          const rotation =
            Number(
              (page as unknown as { getObject?: () => { getInheritable?: (key: string) => { asNumber?: () => number } } })
                .getObject?.()
                .getInheritable?.('Rotate')
                ?.asNumber?.() ?? 0,
            ) || 0;
          return { text: text.replace(/\n(?=\n)/g, '\n'), width: Math.abs(x1 - x0), height: Math.abs(y1 - y0), rotation };
        } finally {
          page.destroy();
        }
      },
      async close() {
        document.destroy();
      },
    };
  },
};
