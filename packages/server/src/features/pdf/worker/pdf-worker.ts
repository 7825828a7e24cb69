import { threadId, type MessagePort } from 'node:worker_threads';
import { getHeapStatistics } from 'node:v8';
import { PdfEngineError, type EngineMetadata, type PdfEngine, type PdfEngineErrorCode, type PdfEngineName } from './engine.ts';
import { normaliseText } from './normalise-text.ts';

/**
 * The parser worker, run by Piscina in a worker thread with a V8 memory cap. Self-contained:
 * it imports only its engines and the normaliser, never the server, so it starts fast and a
 * crash here cannot take shared state with it. Progress goes over the task's own MessagePort
 * (`started`, one `page` per page, then `done`), which keeps pages in order and lets the server
 * stream them; the task's return value only signals success.
 */

export interface ParseTask {
  bytes: Uint8Array;
  engine: PdfEngineName;
  password?: string;
  startPage: number;
  maxPages: number;
  maxChars: number;
  /** Refuse to go on once the engine's own memory (WASM heaps) passes this many bytes. */
  memoryLimitBytes: number;
  port: MessagePort;
  /** Only load the engine and report the worker's boot time (pool warm-up). */
  warmup?: boolean;
  /** `docx`: convert a DOCX to HTML here too, under the same deadlines and memory cap. */
  format?: 'pdf' | 'docx';
}

export interface WorkerPage {
  page_number: number;
  text: string;
  char_count: number;
  truncated?: boolean;
  layout: { width: number; height: number; rotation: number; line_count: number };
}

export interface WorkerWarning {
  code: string;
  message: string;
  page_number?: number;
}

export interface WorkerSummary {
  engine: PdfEngineName;
  page_count: number;
  start_page: number;
  pages_returned: number;
  char_count: number;
  truncated: boolean;
  truncated_reason: 'max_pages' | 'max_chars' | null;
  metadata: EngineMetadata;
  warnings: WorkerWarning[];
  /** Peak V8 heap of this worker during the task (bytes), for the bench and the logs. */
  peak_heap_bytes: number;
  engine_load_ms: number;
  /** DOCX conversions only: the document as HTML, for the server to split into sections. */
  html?: string;
}

export type WorkerMessage =
  /** `at`: when the task began, on the clock both threads share (`performance.timeOrigin + performance.now()`). */
  | { type: 'started'; thread_id: number; at: number }
  | { type: 'page'; page: WorkerPage }
  | { type: 'done'; summary: WorkerSummary }
  | { type: 'failed'; code: PdfEngineErrorCode | 'document_invalid'; message: string };

const engines = new Map<string, Promise<PdfEngine>>();
/** Only the configured engine is ever imported, so a worker loads one WASM module or pdf.js, never all. */
const engineLoaders: Record<PdfEngineName, () => Promise<PdfEngine>> = {
  pdfium: () => import('./pdfium-engine.ts').then((module) => module.pdfiumEngine),
  pdfjs: () => import('./pdfjs-engine.ts').then((module) => module.pdfjsEngine),
  mupdf: () => import('./mupdf-engine.ts').then((module) => module.mupdfEngine),
};
function engineNamed(name: PdfEngineName): Promise<PdfEngine> {
  let engine = engines.get(name);
  if (!engine) {
    engine = engineLoaders[name]();
    engines.set(name, engine);
  }
  return engine;
}

function heapBytes(): number {
  const stats = getHeapStatistics();
  return stats.used_heap_size + stats.external_memory;
}

export default async function parsePdf(task: ParseTask): Promise<boolean> {
  const { port } = task;
  const post = (message: WorkerMessage) => port.postMessage(message);
  post({ type: 'started', thread_id: threadId, at: performance.timeOrigin + performance.now() });
  let peak = heapBytes();
  const engineStarted = performance.now();
  if (task.format === 'docx') return convertDocx(task, post);
  try {
    const engine = await engineNamed(task.engine);
    const engineLoadMs = performance.now() - engineStarted;
    if (task.warmup) {
      // One real page, so fonts, character maps and the JIT are ready for the first request.
      const document = await engine.open(Buffer.from(WARM_UP_PDF, 'base64'), undefined);
      await document.page(1).finally(() => document.close());
      return true;
    }
    const document = await engine.open(task.bytes, task.password, { memoryLimitBytes: task.memoryLimitBytes });
    try {
      const warnings: WorkerWarning[] = [];
      let metadata: EngineMetadata = {};
      try {
        metadata = await document.metadata();
      } catch {
        warnings.push({ code: 'metadata_unreadable', message: 'The document information could not be read.' });
      }
      const pageCount = document.pageCount;
      if (pageCount === 0) {
        post({ type: 'failed', code: 'pdf_invalid', message: 'The PDF has no readable pages.' });
        return false;
      }
      const last = Math.min(pageCount, task.startPage + task.maxPages - 1);
      if (task.startPage > pageCount) {
        warnings.push({ code: 'start_page_beyond_end', message: `start_page ${task.startPage} is past the last page (${pageCount}).` });
      }
      let chars = 0;
      let returned = 0;
      let truncatedReason: WorkerSummary['truncated_reason'] = null;
      for (let pageNumber = task.startPage; pageNumber <= last; pageNumber += 1) {
        if (chars >= task.maxChars) {
          truncatedReason = 'max_chars';
          break;
        }
        let text = '';
        let layout = { width: 0, height: 0, rotation: 0, line_count: 0 };
        try {
          const page = await document.page(pageNumber);
          text = normaliseText(page.text);
          layout = {
            width: round(page.width),
            height: round(page.height),
            rotation: page.rotation,
            line_count: text === '' ? 0 : text.split('\n').filter((line) => line !== '').length,
          };
          if (text === '') warnings.push({ code: 'no_text_layer', message: 'The page has no extractable text (a scan or drawing?).', page_number: pageNumber });
        } catch (error) {
          // An engine error on a page ends the document (its engine cannot go on); others cost that page only.
          if (error instanceof PdfEngineError) throw error;
          warnings.push({ code: 'page_failed', message: 'The page could not be read; its text is empty.', page_number: pageNumber });
        }
        let pageTruncated = false;
        if (chars + text.length > task.maxChars) {
          text = text.slice(0, task.maxChars - chars);
          pageTruncated = true;
          truncatedReason = 'max_chars';
        }
        chars += text.length;
        returned += 1;
        post({ type: 'page', page: { page_number: pageNumber, text, char_count: text.length, ...(pageTruncated ? { truncated: true } : {}), layout } });
        peak = Math.max(peak, heapBytes());
        if (peak > task.memoryLimitBytes) {
          post({ type: 'failed', code: 'pdf_too_complex', message: 'Extracting this document needs more memory than a parser worker may use.' });
          return false;
        }
        if (pageTruncated) break;
      }
      if (truncatedReason === null && last < pageCount && task.startPage <= pageCount) truncatedReason = 'max_pages';
      post({
        type: 'done',
        summary: {
          engine: task.engine,
          page_count: pageCount,
          start_page: task.startPage,
          pages_returned: returned,
          char_count: chars,
          truncated: truncatedReason !== null,
          truncated_reason: truncatedReason,
          metadata,
          warnings,
          peak_heap_bytes: peak,
          engine_load_ms: engineLoadMs,
        },
      });
      return true;
    } finally {
      await document.close().catch(() => {});
    }
  } catch (error) {
    if (error instanceof PdfEngineError) post({ type: 'failed', code: error.code, message: error.message });
    else post({ type: 'failed', code: 'pdf_invalid', message: 'The file is not a readable PDF.' });
    return false;
  } finally {
    port.close();
  }
}

/**
 * DOCX through mammoth. A DOCX is a ZIP: a small file can inflate to gigabytes, which is why
 * this runs in a capped, deadline-bound worker and not in the server's own thread.
 */
async function convertDocx(task: ParseTask, post: (message: WorkerMessage) => void): Promise<boolean> {
  const started = performance.now();
  try {
    const mammoth = await import('mammoth');
    let converted: { value: string; messages: Array<{ type: string }> };
    try {
      converted = await mammoth.convertToHtml({ buffer: Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength) });
    } catch {
      post({ type: 'failed', code: 'document_invalid', message: 'The bytes are not a readable DOCX file.' });
      return false;
    }
    const warnings = converted.messages.some((message) => message.type === 'warning')
      ? [{ code: 'docx_conversion', message: 'Some DOCX content could not be converted (unusual styles or objects); its text may be missing.' }]
      : [];
    post({
      type: 'done',
      summary: {
        engine: task.engine,
        page_count: 0,
        start_page: 1,
        pages_returned: 0,
        char_count: 0,
        truncated: false,
        truncated_reason: null,
        metadata: {},
        warnings,
        peak_heap_bytes: heapBytes(),
        engine_load_ms: performance.now() - started,
        html: converted.value,
      },
    });
    return true;
  } finally {
    task.port.close();
  }
}

/** A one-page PDF with one line of Helvetica text (731 bytes), parsed by every new worker. */
const WARM_UP_PDF =
  'JVBERi0xLjcKJeLjz9MKMSAwIG9iago8PCAvVHlwZSAvQ2F0YWxvZyAvUGFnZXMgMiAwIFIgPj4KZW5kb2JqCjIgMCBvYmoKPDwgL1R5cGUgL1BhZ2VzIC9LaWRzIFs1IDAgUl0gL0NvdW50IDEgPj4KZW5kb2JqCjMgMCBvYmoKPDwgL1R5cGUgL0ZvbnQgL1N1YnR5cGUgL1R5cGUxIC9CYXNlRm9udCAvSGVsdmV0aWNhIC9FbmNvZGluZyAvV2luQW5zaUVuY29kaW5nID4+CmVuZG9iago0IDAgb2JqCjw8IC9Qcm9kdWNlciAoc3ZjIHRlc3QgZml4dHVyZXMpIC9DcmVhdGlvbkRhdGUgKEQ6MjAyNDAxMzExMjAwMDBaKSA+PgplbmRvYmoKNSAwIG9iago8PCAvVHlwZSAvUGFnZSAvUGFyZW50IDIgMCBSIC9NZWRpYUJveCBbMCAwIDYxMiA3OTJdIC9SZXNvdXJjZXMgPDwgL0ZvbnQgPDwgL0YxIDMgMCBSID4+ID4+IC9Db250ZW50cyA2IDAgUiA+PgplbmRvYmoKNiAwIG9iago8PCAvTGVuZ3RoIDM4ID4+CnN0cmVhbQpCVCAvRjEgMTIgVGYgNzIgNzIwIFRkICh3YXJtIHVwKSBUaiBFVAplbmRzdHJlYW0KZW5kb2JqCnhyZWYKMCA3CjAwMDAwMDAwMDAgNjU1MzUgZiAKMDAwMDAwMDAxNSAwMDAwMCBuIAowMDAwMDAwMDY0IDAwMDAwIG4gCjAwMDAwMDAxMjEgMDAwMDAgbiAKMDAwMDAwMDIxOCAwMDAwMCBuIAowMDAwMDAwMzAzIDAwMDAwIG4gCjAwMDAwMDA0MjkgMDAwMDAgbiAKdHJhaWxlcgo8PCAvU2l6ZSA3IC9Sb290IDEgMCBSIC9JbmZvIDQgMCBSPj4Kc3RhcnR4cmVmCjUxNwolJUVPRgo=';

const round = (value: number) => Math.round(value * 100) / 100;
