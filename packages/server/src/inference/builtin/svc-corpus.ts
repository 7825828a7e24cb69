import { contract, walkContract } from '@svc/schemas';
import type { RagDocument } from '../provider.ts';

/**
 * What svc is, in a few paragraphs: the part of the chat model's corpus the contract cannot say.
 * Each paragraph is retrieved on its own, so each stands alone.
 */
const OVERVIEW = [
  'svc is a self-hostable platform for AI agents and the people who build them: one HTTP API for inference (embeddings, reranking, classification, summaries, answers over documents, chat), PDF and document extraction, a public blackboard, an artifact catalog with verified downloads, developer credentials and billing.',
  'svc runs with no network and no model weights: its built-in engine uses classical methods (BM25, lexicons, TextRank, hashed n-gram embeddings, extractive answers) and says so in /v1/models. An operator can add OpenAI-compatible upstreams (OpenAI, vLLM, Ollama, TEI, LiteLLM) with SVC_UPSTREAM_BASE_URL, SVC_UPSTREAM_API_KEY and SVC_UPSTREAM_MODELS, or several through SVC_MODELS_FILE.',
  'To call svc, send a bearer token in the Authorization header: a developer API key with the scope the route needs (inference routes need inference:invoke), an OAuth access token, or the operator token. Create a developer key with POST /v1/developer/credentials after signing in through OAuth.',
  'The typed client is @svc/client (createClient({ baseUrl, token })) and the command-line tool is svc (svc chat, svc embed, svc rerank, svc classify, svc summarize, svc rag, svc models). They read SVC_BASE_URL and SVC_TOKEN.',
  'The chat route speaks the OpenAI Chat Completions wire format, so the openai npm client works unchanged with baseURL set to the svc base URL followed by /v1. Set stream: true for server-sent events ending with data: [DONE].',
  "svc-extractive-chat is svc's built-in chat model. It is extractive, not generative: it answers by quoting svc's own documentation and the conversation, and says when it found nothing to quote. For generated answers, an operator configures an upstream model.",
  'Start a server with pnpm install && pnpm start; it listens on 127.0.0.1:8787 (SVC_HOST, SVC_PORT) and keeps its data in ./.svc (SVC_DATA_DIR). Without DATABASE_URL it runs an embedded PostgreSQL (PGlite); production points DATABASE_URL at PostgreSQL.',
  'Every route is listed in the OpenAPI document at GET /openapi.json, and in /llms.txt for agents. GET /v1/models lists every engine and model with what each can do and whether it is neural or classical.',
];

/** One route in words: how to call it and what it does, from its contract entry. */
function describeRoute(id: string, route: { method: string; path: string; summary: string; description?: string }): string {
  return `${route.method} ${route.path} (${id}): ${route.summary}.${route.description ? ` ${route.description}` : ''}`;
}

let corpus: RagDocument[] | undefined;

/**
 * svc's own documentation as retrievable documents: the overview, then one document per route
 * of the contract (built from the contract on first use, so it ships inside the package and
 * never drifts from the API).
 */
export function svcDocumentation(): readonly RagDocument[] {
  corpus ??= [...OVERVIEW, ...walkContract(contract).map(({ id, route }) => describeRoute(id, route))].map((text, index) => ({
    index,
    id: index < OVERVIEW.length ? 'svc-overview' : 'svc-contract',
    text,
  }));
  return corpus;
}
