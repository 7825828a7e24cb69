/**
 * The modules the server runs in worker threads, each named once here: the source path the
 * workspace runs (Node strips the types), and the name of its own tsup entry in the published
 * build (tsup.config.ts builds `dist/<name>.js` from this table). A worker module is loaded by
 * file name, so it must exist as a file in both layouts; a relative `new URL('./x.ts')` beside
 * the pool only works in the first, since in dist the pool is bundled into a chunk.
 */
export const WORKER_MODULES = {
  'pdf-worker': 'features/pdf/worker/pdf-worker.ts',
  'job-operations-worker': 'features/jobs/operations/job-operations-worker.ts',
  'documents-worker': 'features/system/documents-worker.ts',
  'x402-defaults-worker': 'features/billing/x402-defaults-worker.ts',
  'json-body-worker': 'http/json-body-worker.ts',
  'document-sections-worker': 'features/pdf/document-sections-worker.ts',
  'first-paint-worker': 'console/first-paint-worker.ts',
} as const;

export type WorkerModuleName = keyof typeof WORKER_MODULES;

/**
 * The URL of a worker module for the layout this code runs from: this file beside the sources
 * (`src/worker-modules.ts`), or bundled into a file at the top of `dist/`, beside the entries.
 */
export function workerModuleUrl(name: WorkerModuleName): URL {
  const here = import.meta.url;
  return here.endsWith('.ts') ? new URL(`./${WORKER_MODULES[name]}`, here) : new URL(`./${name}.js`, here);
}
