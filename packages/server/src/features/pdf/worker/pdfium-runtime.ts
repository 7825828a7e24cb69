import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { WrappedPdfiumModule } from '@embedpdf/pdfium';

/**
 * One PDFium WASM instance per worker thread, loaded once and reused by every document, with a
 * ceiling on its linear memory. WASM memory is outside V8's heap, so the worker's resourceLimits
 * never stop it; V8 does count it as external memory, which the per-page check and the pool's
 * watchdog see, but one allocation can grow it by hundreds of MiB between two polls. So growth
 * past the ceiling is refused at the source: PDFium then fails that allocation (or aborts),
 * and the engine answers `pdf_too_complex` instead of taking the worker past its cap.
 */
const require = createRequire(import.meta.url);

export interface PdfiumRuntime {
  readonly module: WrappedPdfiumModule;
  /** Set when PDFium asked for more memory than the ceiling allowed since the last reset. */
  refusedGrowth: boolean;
  /** Set once the instance trapped or aborted: its heap may be inconsistent, so it is not reused. */
  broken: boolean;
  /** Bytes of WASM linear memory now (it never shrinks while the instance lives). */
  memoryBytes(): number;
  /** Copies bytes into WASM memory at `pointer` (from malloc). */
  write(pointer: number, bytes: Uint8Array): void;
  setCeiling(bytes: number): void;
}

let current: Promise<PdfiumRuntime> | undefined;
let wasmBinary: Buffer | undefined;

export function pdfiumRuntime(): Promise<PdfiumRuntime> {
  return (current ??= createRuntime().catch((error: unknown) => {
    current = undefined;
    throw error;
  }));
}

/** Drops the instance (broken, or grown large on one document); the next document gets a fresh one and the old heap is collected. */
export function discardPdfiumRuntime(runtime: PdfiumRuntime): void {
  runtime.broken = true;
  void current?.then((live) => {
    if (live === runtime) current = undefined;
  });
}

async function createRuntime(): Promise<PdfiumRuntime> {
  const { init } = await import('@embedpdf/pdfium');
  wasmBinary ??= readFileSync(require.resolve('@embedpdf/pdfium/pdfium.wasm'));
  // Emscripten reports failed growth and aborts on stderr; the engine reports them as answers.
  const quiet = () => {};
  const module = await init({
    wasmBinary: wasmBinary.buffer.slice(wasmBinary.byteOffset, wasmBinary.byteOffset + wasmBinary.byteLength) as ArrayBuffer,
    print: quiet,
    printErr: quiet,
  });
  module.PDFiumExt_Init();
  const memory = (module.pdfium.wasmExports as unknown as { memory: WebAssembly.Memory }).memory;
  let ceiling = Number.POSITIVE_INFINITY;
  const runtime: PdfiumRuntime = {
    module,
    refusedGrowth: false,
    broken: false,
    memoryBytes: () => memory.buffer.byteLength,
    write: (pointer, bytes) => new Uint8Array(memory.buffer).set(bytes, pointer),
    setCeiling(bytes) {
      ceiling = bytes;
      runtime.refusedGrowth = false;
    },
  };
  const grow = memory.grow.bind(memory);
  // Emscripten's heap resize calls `wasmMemory.grow(pages)` and treats a throw as "no memory".
  memory.grow = (pages: number) => {
    if (memory.buffer.byteLength + pages * 65_536 > ceiling) {
      runtime.refusedGrowth = true;
      throw new RangeError('PDFium memory ceiling reached');
    }
    return grow(pages);
  };
  return runtime;
}
