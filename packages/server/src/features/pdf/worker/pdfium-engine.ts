import { cleanMetadata, infoDictionaryMetadata, PdfEngineError, type EnginePage, type OpenedPdf, type PdfEngine } from './engine.ts';
import { discardPdfiumRuntime, pdfiumRuntime, type PdfiumRuntime } from './pdfium-runtime.ts';
import { pdfiumPageText } from './pdfium-text.ts';

/**
 * PDFium (Chromium's PDF library, BSD-3-Clause and Apache-2.0) compiled to WASM, through
 * @embedpdf/pdfium (MIT): the default engine. Licence-safe for a self-hosted service and two to
 * three times as fast as pdf.js here (docs/pdf.md). Every handle PDFium gives out (text page, page,
 * document) and the copy of the input in WASM memory is freed as soon as it is done with, so a
 * long-lived worker does not grow; the WASM instance is shared by all documents of the worker.
 */

/** FPDF_GetLastError codes (fpdfview.h). */
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;

/**
 * The share of the worker's cap PDFium's memory may take: the rest is the V8 heap's, and the
 * total stays under the pool's watchdog (75% of the cap), so a greedy file ends in a clean
 * `pdf_too_complex` from here rather than a terminated worker.
 */
const WASM_SHARE_OF_CAP = 0.6;
/** A document that grew the instance past this share of the cap leaves a fresh one behind it. */
const RECYCLE_SHARE_OF_CAP = 0.25;

export const pdfiumEngine: PdfEngine = {
  name: 'pdfium',
  async open(bytes, password, options = {}): Promise<OpenedPdf> {
    const runtime = await pdfiumRuntime();
    const cap = options.memoryLimitBytes ?? Number.POSITIVE_INFINITY;
    runtime.setCeiling(cap * WASM_SHARE_OF_CAP);
    const { module } = runtime;
    const { malloc, free } = module.pdfium.wasmExports;
    const guarded = <T>(work: () => T): T => guard(runtime, work);

    const input = guarded(() => malloc(Math.max(1, bytes.byteLength)));
    if (!input) throw tooComplex();
    runtime.write(input, bytes);
    // PDFium reads the input in place for the document's whole life: it is freed after the document.
    const document = guarded(() => module.FPDF_LoadMemDocument(input, bytes.byteLength, password ?? (null as unknown as string)));
    if (!document) {
      const error = module.FPDF_GetLastError();
      free(input);
      if (error === FPDF_ERR_PASSWORD) {
        throw password === undefined
          ? new PdfEngineError('pdf_encrypted', 'The PDF is encrypted; send its password.')
          : new PdfEngineError('pdf_password_incorrect', 'The password does not open this PDF.');
      }
      if (error === FPDF_ERR_SECURITY) throw new PdfEngineError('pdf_encrypted', 'The PDF is encrypted with a security handler this engine cannot open.');
      throw new PdfEngineError('pdf_invalid', 'The file is not a readable PDF (unreadable structure).');
    }
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      if (!runtime.broken) {
        module.FPDF_CloseDocument(document);
        free(input);
      }
      if (runtime.memoryBytes() > cap * RECYCLE_SHARE_OF_CAP) discardPdfiumRuntime(runtime);
    };
    const pageCount = guarded(() => module.FPDF_GetPageCount(document));
    if (pageCount < 0) {
      close();
      throw new PdfEngineError('pdf_invalid', 'The file is not a readable PDF (no page tree).');
    }
    return {
      pageCount,
      async metadata() {
        return guarded(() => {
          const field = (key: string) => readUtf16(runtime, (buffer, length) => module.FPDF_GetMetaText(document, key, buffer, length));
          const version = withScratch(runtime, 4, (pointer) => (module.FPDF_GetFileVersion(document, pointer) ? module.pdfium.getValue(pointer, 'i32') : 0));
          return cleanMetadata({
            ...infoDictionaryMetadata(field),
            pdf_version: version > 0 ? `${Math.floor(version / 10)}.${version % 10}` : undefined,
            language: readUtf16(runtime, (buffer, length) => module.FPDFCatalog_GetLanguage(document, buffer, length)),
          });
        });
      },
      async page(pageNumber): Promise<EnginePage> {
        return guarded(() => {
          const page = module.FPDF_LoadPage(document, pageNumber - 1);
          if (!page) throw new Error(`page ${pageNumber} unreadable`);
          try {
            // PDFium answers the displayed (rotated) size; the contract, like pdf.js, gives the page's own size and its rotation.
            const rotation = Math.max(0, module.FPDFPage_GetRotation(page)) * 90;
            const turned = rotation === 90 || rotation === 270;
            const displayedWidth = module.FPDF_GetPageWidthF(page);
            const displayedHeight = module.FPDF_GetPageHeightF(page);
            return {
              text: pdfiumPageText(module, page),
              width: turned ? displayedHeight : displayedWidth,
              height: turned ? displayedWidth : displayedHeight,
              rotation,
            };
          } finally {
            module.FPDF_ClosePage(page);
          }
        });
      },
      async close() {
        close();
      },
    };
  },
};

/**
 * Runs PDFium work. A refused allocation or a trap (PDFium aborting, or a bug in it) leaves the
 * instance's heap in an unknown state: it is discarded, and the document fails as a whole.
 */
function guard<T>(runtime: PdfiumRuntime, work: () => T): T {
  if (runtime.broken) throw new PdfEngineError('pdf_invalid', 'The PDF engine failed on an earlier part of this file.');
  try {
    const result = work();
    if (runtime.refusedGrowth) throw tooComplex();
    return result;
  } catch (error) {
    if (error instanceof PdfEngineError) {
      if (error.code === 'pdf_too_complex') discardPdfiumRuntime(runtime);
      throw error;
    }
    if (runtime.refusedGrowth) {
      discardPdfiumRuntime(runtime);
      throw tooComplex();
    }
    // A trap, an abort, or a stack overflow inside PDFium (RangeError) can leave its heap half-built.
    if (error instanceof WebAssembly.RuntimeError || error instanceof RangeError) {
      discardPdfiumRuntime(runtime);
      throw new PdfEngineError('pdf_invalid', 'The file is not a readable PDF (the engine stopped on it).');
    }
    throw error;
  }
}

const tooComplex = () => new PdfEngineError('pdf_too_complex', 'Extracting this document needs more memory than a parser worker may use.');

function withScratch<T>(runtime: PdfiumRuntime, bytes: number, use: (pointer: number) => T): T {
  const { malloc, free } = runtime.module.pdfium.wasmExports;
  const pointer = malloc(bytes);
  if (!pointer) throw tooComplex();
  try {
    return use(pointer);
  } finally {
    free(pointer);
  }
}

/** PDFium's string getters answer a UTF-16LE length in bytes (terminator included) when given no buffer. */
function readUtf16(runtime: PdfiumRuntime, read: (buffer: number, length: number) => number): string | undefined {
  const length = read(0, 0);
  if (length <= 2) return undefined;
  return withScratch(runtime, length, (buffer) => {
    read(buffer, length);
    return runtime.module.pdfium.UTF16ToString(buffer, length);
  });
}
