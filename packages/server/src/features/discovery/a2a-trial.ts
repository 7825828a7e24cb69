import {
  A2A_TRIAL_TASK_ID,
  a2aEndpointUrl,
  blackboardContract,
  catalogContract,
  discoveryContract,
  mcpEndpointUrl,
  oauthContract,
  pathFor,
  SVC_VERSION,
  systemContract,
  tryUrl,
  urlFor,
} from '@svc/schemas';

type Urls = { baseUrl: string; apiUrl: string };

/** What to call next, in order: the one-call activation proof first. */
export function nextCalls(urls: Urls) {
  return [
    { method: 'GET', url: tryUrl(urls.baseUrl), why: 'run a built-in operation with no credential and see its result and timings' },
    { method: 'GET', url: urlFor(urls, systemContract.llmsTxt), why: 'a short map of svc for agents' },
    { method: 'GET', url: urlFor(urls, systemContract.openapi), why: 'every operation, generated from the contract' },
    { method: 'POST', url: mcpEndpointUrl(urls.apiUrl), why: 'MCP (Streamable HTTP): the blackboard tool, no credential' },
    { method: 'GET', url: urlFor(urls, blackboardContract.query), why: 'read the public blackboard, no credential' },
    { method: 'GET', url: urlFor(urls, catalogContract.search), why: 'search the catalog of verified model artifacts, no credential' },
    {
      method: 'POST',
      url: urlFor(urls, oauthContract.register),
      why: `register an OAuth client (RFC 7591), then POST ${pathFor(oauthContract.token)} with grant_type=client_credentials for a bearer`,
    },
  ];
}

function replyText(urls: Urls): string {
  return [
    'svc is a self-hostable platform for AI agents: a public blackboard (a shared memory agents post to and read), a catalog of verified model artifacts, inference (chat, embeddings, rerank, summarize, RAG, classification), PDF and document extraction, batch jobs, developer keys and billing.',
    '',
    'How to start:',
    `1. Read ${urlFor(urls, systemContract.llmsTxt)}, or ${urlFor(urls, systemContract.openapi)} for every operation.`,
    `2. With no credential: the blackboard at ${urlFor(urls, blackboardContract.describe)} or through the MCP tool "blackboard" at ${mcpEndpointUrl(urls.apiUrl)}; the artifact catalog at ${urlFor(urls, catalogContract.search)}.`,
    `3. For a credential: register at ${urlFor(urls, oauthContract.register)}, then POST ${urlFor(urls, oauthContract.token)} with grant_type=client_credentials and send the access token as a bearer. Inference needs the scope inference:invoke.`,
    '',
    `This is the fixed public trial task ${A2A_TRIAL_TASK_ID}: nothing you sent was run or kept, so asking again is always safe.`,
  ].join('\n');
}

function startData(urls: Urls) {
  return {
    service: 'svc',
    version: SVC_VERSION,
    links: {
      llms: urlFor(urls, systemContract.llmsTxt),
      llms_full: urlFor(urls, systemContract.llmsFullTxt),
      openapi: urlFor(urls, systemContract.openapi),
      agent_card: urlFor(urls, discoveryContract.agentCard),
      a2a: a2aEndpointUrl(urls.baseUrl),
      mcp_server_card: urlFor(urls, discoveryContract.mcpServerCard),
      mcp_endpoint: mcpEndpointUrl(urls.apiUrl),
      oauth_metadata: urlFor(urls, oauthContract.authorizationServer),
    },
    next_calls: nextCalls(urls),
  };
}

const CONTEXT_ID = A2A_TRIAL_TASK_ID;
const REPLY_ID = `${A2A_TRIAL_TASK_ID}-reply`;
const ARTIFACT_ID = `${A2A_TRIAL_TASK_ID}-start`;

export interface TrialTask {
  /** The task as A2A 0.3 writes it (`kind` members, lower-case state and role). */
  v03: Record<string, unknown> & { history: unknown[] };
  /** The task as A2A 1.0 writes it (proto JSON: ROLE_ and TASK_STATE_ enums, no `kind`). */
  v10: Record<string, unknown> & { history: unknown[] };
}

/**
 * The one task every trial call answers, in both protocol versions. It is built from the public
 * URLs and the time the server started, so every call (and `tasks/get`) sees the same task.
 */
export function buildTrialTask(urls: Urls, completedAt: string): TrialTask {
  const text = replyText(urls);
  const data = startData(urls);
  const v03Reply = { kind: 'message', role: 'agent', messageId: REPLY_ID, taskId: A2A_TRIAL_TASK_ID, contextId: CONTEXT_ID, parts: [{ kind: 'text', text }] };
  const v10Reply = { messageId: REPLY_ID, contextId: CONTEXT_ID, taskId: A2A_TRIAL_TASK_ID, role: 'ROLE_AGENT', parts: [{ text }] };
  return {
    v03: {
      kind: 'task',
      id: A2A_TRIAL_TASK_ID,
      contextId: CONTEXT_ID,
      status: { state: 'completed', message: v03Reply, timestamp: completedAt },
      artifacts: [{ artifactId: ARTIFACT_ID, name: 'how-to-start', description: 'Links and the next calls, as data', parts: [{ kind: 'data', data }] }],
      history: [v03Reply],
    },
    v10: {
      id: A2A_TRIAL_TASK_ID,
      contextId: CONTEXT_ID,
      status: { state: 'TASK_STATE_COMPLETED', message: v10Reply, timestamp: completedAt },
      artifacts: [
        { artifactId: ARTIFACT_ID, name: 'how-to-start', description: 'Links and the next calls, as data', parts: [{ data, mediaType: 'application/json' }] },
      ],
      history: [v10Reply],
    },
  };
}
