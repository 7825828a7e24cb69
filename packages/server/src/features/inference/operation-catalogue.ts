import { documentsContract, inferenceContract, pathFor, pdfContract, type InferenceOperation } from '@svc/schemas';
import type { Capability } from '../../inference/provider.ts';

/** One operation as /v1/route and /v1/discover describe it. */
export interface OperationEntry {
  operation: InferenceOperation;
  path: string;
  /** The model capability it runs on; operations without one need no model. */
  capability: Capability | null;
  title: string;
  /** Words a description of a need uses when it wants this operation; what the similarity is computed over. */
  text: string;
  /** Request fields that identify a body sent to this operation (all must be present). */
  fields: readonly string[];
}

/**
 * The operations svc serves, in words. Each `text` is what a person asking for the operation
 * tends to say; route and discover rank these by similarity to the caller's description.
 */
export const operationCatalogue: readonly OperationEntry[] = [
  {
    operation: 'chat',
    path: pathFor(inferenceContract.chat),
    capability: 'chat',
    fields: ['messages'],
    title: 'Chat completions (OpenAI format)',
    text: 'chat conversation assistant reply answer message respond talk dialogue generate text completion prompt llm ask question write',
  },
  {
    operation: 'embeddings',
    path: pathFor(inferenceContract.embeddings),
    capability: 'embeddings',
    fields: ['input'],
    title: 'Embeddings (OpenAI format)',
    text: 'embed embeddings vector vectors similarity semantic search cluster clustering nearest neighbour duplicate near-duplicate index encode dense retrieval',
  },
  {
    operation: 'rerank',
    path: pathFor(inferenceContract.rerank),
    capability: 'rerank',
    fields: ['query', 'documents'],
    title: 'Rerank documents against a query',
    text: 'rerank ranking rank order sort documents results relevance query search results best match retrieval top',
  },
  {
    operation: 'classify',
    path: pathFor(inferenceContract.classify),
    capability: 'classify',
    fields: ['inputs'],
    title: 'Classify texts',
    text: 'classify classification label labels categorize categorise category sentiment positive negative toxicity toxic abuse moderation prompt injection jailbreak tickets support triage routing intent nli entailment contradiction detect',
  },
  {
    operation: 'summarize',
    path: pathFor(inferenceContract.summarize),
    capability: 'summarize',
    fields: ['text'],
    title: 'Summarise a text',
    text: 'summarize summarise summary summaries shorten condense abstract tldr key points digest long text article report',
  },
  {
    operation: 'rag',
    path: pathFor(inferenceContract.rag),
    capability: 'rag',
    fields: ['question'],
    title: 'Answer questions from documents, with citations',
    text: 'rag answer question questions documents cite citations sources grounded retrieval augmented knowledge base faq passage quote',
  },
  {
    operation: 'pdf_extract',
    path: pathFor(pdfContract.extract),
    capability: null,
    fields: ['data_base64'],
    title: 'Extract text from PDFs',
    text: 'pdf extract text pages parse document scan read paper invoice report page-aligned ocr',
  },
  {
    operation: 'document_extract',
    path: pathFor(documentsContract.extract),
    capability: null,
    fields: ['format'],
    title: 'Extract sections from HTML, Markdown, DOCX or PDF',
    text: 'document extract html markdown docx word sections headings parse convert text web page',
  },
  {
    operation: 'eval',
    path: pathFor(inferenceContract.eval),
    capability: null,
    fields: ['references'],
    title: 'Score predictions against references',
    text: 'eval evaluate evaluation score metric metrics accuracy exact match f1 rouge bleu benchmark compare predictions references quality measure',
  },
  {
    operation: 'find_specialist',
    path: pathFor(inferenceContract.findSpecialist),
    capability: null,
    fields: ['task'],
    title: 'Find catalog artifacts and models for a task',
    text: 'find specialist model artifact catalog which model best model recommend download weights checkpoint dataset tool',
  },
];
