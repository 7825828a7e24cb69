/** The tools whose work can be long: they declare `execution.taskSupport` and run as tasks when asked. */
export const TASK_TOOLS: ReadonlySet<string> = new Set([
  'pdf_extract',
  'documents_extract',
  'inference_chat',
  'inference_rag',
  'inference_summarize',
  'inference_embeddings',
  'inference_rerank',
  'inference_classify',
  'jobs_get',
]);
