import { pdfLimits } from '@svc/schemas';
import { yieldToLoop } from '../../bounded/work-in-slices.ts';
import { lazyWorkerPool, outOfMemory } from '../../lazy-worker-pool.ts';
import { ServiceError } from '../../service-error.ts';
import type { DocumentSectionsTask } from './document-sections-worker.ts';
import type { SectionedText, TextDocumentFormat } from './section-document.ts';

/**
 * Text past this many characters is sectioned in a worker thread. Sectioning is linear and
 * sliced either way, but its garbage is not: 4 MiB of HTML headings kept the young generation so
 * full that single collections took 65-170 ms on the event loop of a 2-core VM.
 */
export const OFF_THREAD_DOCUMENT_CHARS = 1_048_576;
/** 16 MiB of unclosed tags holds 3 million open elements and the text's pieces: about 400 MiB at most. */
const WORKER_HEAP_MB = 1024;
const startedPool = lazyWorkerPool('document-sections-worker', { heapMb: WORKER_HEAP_MB, idleMs: 30_000 });

/**
 * A text document's sections from a worker thread, under the PDF parse deadline and a heap cap.
 * The text goes there as UTF-8 bytes, moved rather than copied: encoding 16 MiB took 20-57 ms of
 * the event loop, where posting the string (its structured clone) took 56-160 ms. The answer
 * that comes back holds at most `max_chars` of text. A caller who goes away stops the work.
 */
export async function sectionOffThread(source: string | Uint8Array, format: TextDocumentFormat, maxChars: number, signal: AbortSignal): Promise<SectionedText> {
  // The encoding starts a turn of the loop of its own, apart from whatever came before it.
  await yieldToLoop();
  const bytes = ownedBytes(typeof source === 'string' ? Buffer.from(source, 'utf8') : source);
  const task: DocumentSectionsTask = { bytes, format, maxChars };
  const deadline = AbortSignal.timeout(pdfLimits.parseTimeoutMs);
  try {
    return (await startedPool().run(task, { signal: AbortSignal.any([signal, deadline]), transferList: [bytes] })) as SectionedText;
  } catch (error) {
    if (signal.aborted) throw error;
    if (outOfMemory(error))
      throw new ServiceError('pdf_too_complex', `Sectioning this document needs more than ${WORKER_HEAP_MB} MiB; send a smaller or simpler one.`, {
        cause: error,
      });
    if (deadline.aborted)
      throw new ServiceError('pdf_parse_timeout', `Sectioning this document took more than ${pdfLimits.parseTimeoutMs / 1000} s.`, { cause: error });
    throw new ServiceError('pdf_worker_unavailable', 'The document could not be sectioned: its worker thread failed; retry.', {
      retryable: true,
      cause: error,
    });
  }
}

/** The bytes in an ArrayBuffer of their own, which can be moved: a large Buffer usually is one already. */
function ownedBytes(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer) return bytes.buffer;
  const owned = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(owned).set(bytes);
  return owned;
}
