import type { Logger } from 'pino';
import { jobItemSchemas, type JobOperation, type Principal, type PrincipalKind } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { ServerTiming } from '../../http/server-timing.ts';
import { runClassify, runEmbeddings, runRerank, runSummarize } from '../inference/index.ts';
import type { PdfService } from '../pdf/index.ts';
import { resolveLink } from './operations/resolve-link.ts';
import { calculateOffThread, validateJsonOffThread } from './operations/job-operations-pool.ts';

export interface ItemRun {
  jobId: string;
  index: number;
  principal: { id: string; kind: string };
  signal: AbortSignal;
  log: Logger;
}

/**
 * What an operation sees of the job item it runs: the same shape an HTTP request gives, so the
 * operations (and the PDF pool's admission, deadlines and memory cap) run unchanged. The request
 * id is `<job id>:<item index>`, which is what usage events carry.
 */
function itemContext(run: ItemRun, publicUrl: string): RequestContext {
  const principal: Principal = { kind: run.principal.kind as PrincipalKind, id: run.principal.id, scopes: [], credential: 'none' };
  return {
    requestId: `${run.jobId}:${run.index}`,
    method: 'POST',
    ip: '',
    principal,
    bearer: undefined,
    signal: run.signal,
    timing: new ServerTiming(),
    log: run.log,
    publicUrl,
    headers: {},
    // A job's operations list nothing; were one to, it would see the job owner's rows only.
    rows: { everyone: false, principal },
  };
}

/**
 * Runs one item of a job. The stored item was validated at submission; it is parsed again with
 * the operation's schema to get its defaults (the stored form is the caller's input).
 */
/** What one item's run reaches for: the inference engine, and the PDF and link fetchers' settings. */
export type RunJobItemDeps = Pick<ServerDeps, 'config' | 'log' | 'models' | 'publicUrls' | 'testSeams' | 'usage'>;

export async function runJobItem(deps: RunJobItemDeps, pdf: PdfService, operation: JobOperation, rawItem: unknown, run: ItemRun): Promise<unknown> {
  const context = itemContext(run, deps.publicUrls().baseUrl);
  switch (operation) {
    case 'embeddings':
      return runEmbeddings(deps, jobItemSchemas.embeddings.parse(rawItem), context);
    case 'rerank':
      return runRerank(deps, jobItemSchemas.rerank.parse(rawItem), context);
    case 'classify':
      return runClassify(deps, jobItemSchemas.classify.parse(rawItem), context);
    case 'summarize':
      return runSummarize(deps, jobItemSchemas.summarize.parse(rawItem), context);
    case 'pdf_extract': {
      const body = jobItemSchemas.pdf_extract.parse(rawItem);
      const started = performance.now();
      await pdf.admit(context.principal, context);
      const bytes = await pdf.source(body.url !== undefined ? { kind: 'url', url: body.url } : { kind: 'base64', data: body.data_base64 ?? '' }, context);
      return pdf.extract(bytes, { startPage: body.start_page, maxPages: body.max_pages, maxChars: body.max_chars, password: body.password }, context, started);
    }
    case 'calculate':
      return calculateOffThread(jobItemSchemas.calculate.parse(rawItem).expression, {
        signal: run.signal,
        log: deps.log,
        workerModule: deps.testSeams?.jobOperationsWorkerModule,
      });
    case 'validate_json': {
      const item = jobItemSchemas.validate_json.parse(rawItem);
      return validateJsonOffThread(
        { schema: item.schema, document: item.document },
        { signal: run.signal, log: deps.log, workerModule: deps.testSeams?.jobOperationsWorkerModule },
      );
    }
    case 'resolve_link':
      return resolveLink(
        jobItemSchemas.resolve_link.parse(rawItem).url,
        { timeoutMs: deps.config.pdf.fetchTimeoutMs, signal: run.signal },
        deps.testSeams?.pdfSourceFetch,
      );
  }
}
