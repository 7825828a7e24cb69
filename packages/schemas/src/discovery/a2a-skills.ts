import { catalogContract } from '../catalog/contract.ts';
import { inferenceContract } from '../inference/contract.ts';
import { pdfContract } from '../pdf/contract.ts';
import type { RouteDefinition } from '../route.ts';

/**
 * Where a skill's input goes in its REST route: the body (POST routes) or the query (GET routes).
 * A text part fills `textField` when the data part leaves it out, so "Summarise this: ..." works
 * with no JSON at all; a file part (the PDF skill) fills `data_base64` or `url`.
 */
export interface A2aSkillDefinition {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly examples: readonly string[];
  readonly tags: readonly string[];
  /** The contract route the skill runs: the same handler, auth, funding, limits and errors as REST. */
  readonly route: RouteDefinition;
  readonly inputIn: 'body' | 'query';
  /** The input member a message's text fills when its data part does not give it. */
  readonly textField?: string;
  /** The texts fill `textField` as a list, one per text part (classify's `inputs`), rather than joined. */
  readonly textsAsList?: boolean;
  /** Whether the skill takes a file part (bytes or an https URI). */
  readonly takesFile?: boolean;
}

/**
 * The skills `/a2a` runs for a caller with a credential holding `inference:invoke`. Each is one
 * contract route called in-process exactly as REST calls it; the answer's data part is the REST
 * answer's JSON. A message names its skill in `metadata.skill`, or in a data part's `skill` member.
 */
export const a2aSkills = [
  {
    id: 'rag',
    name: 'Answer from documents',
    description: 'Answer a question from the documents given (POST /v1/rag): the answer as text, the REST answer with its citations as a data part.',
    examples: ['{"skill":"rag","question":"When was it founded?","documents":["..."]}'],
    tags: ['rag', 'citations', 'inference'],
    route: inferenceContract.rag,
    inputIn: 'body',
    textField: 'question',
  },
  {
    id: 'summarize',
    name: 'Summarise',
    description: 'Summarise a text (POST /v1/summarize): the text part is the text, or a data part gives the whole request.',
    examples: ['Summarise this: ...'],
    tags: ['summarize', 'inference'],
    route: inferenceContract.summarize,
    inputIn: 'body',
    textField: 'text',
  },
  {
    id: 'classify',
    name: 'Classify',
    description: 'Classify texts for a task (sentiment, toxicity, prompt_injection, tickets, nli) or into labels (POST /v1/classify).',
    examples: ['{"skill":"classify","task":"sentiment","inputs":["I love it"]}'],
    tags: ['classify', 'inference'],
    route: inferenceContract.classify,
    inputIn: 'body',
    textField: 'inputs',
    textsAsList: true,
  },
  {
    id: 'rerank',
    name: 'Rerank',
    description: 'Rerank documents against a query, best first (POST /v1/rerank).',
    examples: ['{"skill":"rerank","query":"postgres","documents":["a","b"]}'],
    tags: ['rerank', 'inference'],
    route: inferenceContract.rerank,
    inputIn: 'body',
    textField: 'query',
  },
  {
    id: 'catalog-search',
    name: 'Artifact catalog search',
    description: 'Search the catalog of verified model artifacts (GET /api/artifacts): the text part is the query `q`; a data part may give the other filters.',
    examples: ['small reranker'],
    tags: ['catalog', 'models', 'search'],
    route: catalogContract.search,
    inputIn: 'query',
    textField: 'q',
  },
  {
    id: 'pdf-extract',
    name: 'PDF extraction',
    description:
      'Extract page-aligned text from a PDF given as a file part: its bytes, or an https URI fetched by the SSRF-guarded fetcher (POST /v1/pdf/extract, same limits). A data part may add start_page, max_pages, max_chars, password.',
    examples: ['(a file part holding a PDF)'],
    tags: ['pdf', 'extraction'],
    route: pdfContract.extract,
    inputIn: 'body',
    takesFile: true,
  },
] as const satisfies readonly A2aSkillDefinition[];

export type A2aSkillId = (typeof a2aSkills)[number]['id'];

/** Bounds of the authenticated A2A surface; the trial keeps its own (65,536-byte bodies, one fixed task). */
export const a2aLimits = {
  /** The body of a call with a credential: room for a PDF of about 3 MiB as a file part's bytes (larger ones by https URI). */
  bodyBytes: 4_194_304,
  /** The body of a call without a credential (the public trial), as before. */
  trialBodyBytes: 65_536,
  /** Parts of one message. */
  maxParts: 16,
  /** Tasks one principal may have running at once; the next is refused with 429 until one ends. */
  maxRunningPerPrincipal: 4,
  /** A task not done within this is failed with `a2a_task_deadline` and its work aborted. */
  taskDeadlineMs: 120_000,
  /** Tasks kept per principal; older ones are deleted as new ones are stored. */
  maxKeptPerPrincipal: 100,
  /** How long a finished task can be read back (`tasks/get`) by default: the task store's `SVC_TASKS_RESULT_TTL_SECONDS` decides. */
  retentionHours: 24,
  /** A stored task's artifacts above this are kept as a note that the answer was too large to keep (the call itself got it whole). */
  maxStoredResultBytes: 1_048_576,
} as const;
