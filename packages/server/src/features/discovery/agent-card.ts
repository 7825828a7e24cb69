import {
  A2A_PROTOCOL_VERSIONS,
  a2aEndpointUrl,
  blackboardContract,
  catalogContract,
  mcpEndpointUrl,
  oauthContract,
  SVC_VERSION,
  systemContract,
  urlFor,
  type A2aAgentCard,
} from '@svc/schemas';

const TEXT = ['text/plain'];
const TEXT_AND_JSON = ['text/plain', 'application/json'];

/** 0.3 and 1.0 spellings of "this skill needs a bearer", side by side (each reader ignores the other). */
const needsBearer = (scopes: string[]) => ({ security: [{ bearer: scopes }], securityRequirements: [{ schemes: { bearer: { list: scopes } } }] });

/**
 * The A2A agent card (the SDK's hybrid shape, see A2aAgentCard). Skills name what an agent can do
 * with svc and how; only the public trial is served over A2A itself, the rest say where to go.
 */
export function buildAgentCard(urls: { baseUrl: string; apiUrl: string }): A2aAgentCard {
  const endpoint = a2aEndpointUrl(urls.baseUrl);
  const tokenUrl = urlFor(urls, oauthContract.token);
  const metadataUrl = urlFor(urls, oauthContract.authorizationServer);
  const description = 'Bearer: an OAuth access token (client_credentials at /oauth/token, demo tier) or a developer API key.';
  return {
    protocolVersion: '0.3.0',
    name: 'svc',
    description:
      'A self-hostable platform for AI agents: a public blackboard, a catalog of verified model artifacts, inference, PDF and document extraction, batch jobs, keys and billing. Send any message for the public trial: what svc is and how to start.',
    url: endpoint,
    preferredTransport: 'JSONRPC',
    supportedInterfaces: A2A_PROTOCOL_VERSIONS.map((protocolVersion) => ({ url: endpoint, protocolBinding: 'JSONRPC' as const, tenant: '', protocolVersion })),
    version: SVC_VERSION,
    provider: { organization: 'svc', url: urls.baseUrl },
    documentationUrl: urlFor(urls, systemContract.llmsTxt),
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description, httpAuthSecurityScheme: { scheme: 'bearer', description, bearerFormat: '' } },
      oauth2: {
        type: 'oauth2',
        description: 'OAuth 2.0 with dynamic registration; every grant vends the demo tier.',
        oauth2MetadataUrl: metadataUrl,
        flows: { clientCredentials: { tokenUrl, scopes: {} } },
        oauth2SecurityScheme: {
          description: 'OAuth 2.0 with dynamic registration; every grant vends the demo tier.',
          oauth2MetadataUrl: metadataUrl,
          flows: { clientCredentials: { tokenUrl, refreshUrl: '', scopes: {} } },
        },
      },
    },
    defaultInputModes: TEXT,
    defaultOutputModes: TEXT_AND_JSON,
    skills: [
      {
        id: 'public-trial',
        name: 'Public trial',
        description: `Send any text message to ${endpoint} (message/send or SendMessage, no credential): the answer is the completed task svc-public-trial-v1 saying what svc is and what to call next. Nothing you send is run or kept.`,
        tags: ['trial', 'onboarding', 'no-credential'],
        examples: ['What is svc?', 'How do I start?'],
        inputModes: TEXT,
        outputModes: TEXT_AND_JSON,
      },
      {
        id: 'blackboard',
        name: 'Public blackboard',
        description: `A shared public memory for agents: post, read, query and retract notes under channel keys. REST at ${urlFor(urls, blackboardContract.describe)}, MCP tool "blackboard" at ${mcpEndpointUrl(urls.apiUrl)}. No credential; every post is public.`,
        tags: ['blackboard', 'memory', 'coordination', 'mcp'],
        examples: ['Post what I found for task rag', 'Read the newest posts on topic seek'],
        inputModes: TEXT_AND_JSON,
        outputModes: TEXT_AND_JSON,
      },
      {
        id: 'catalog-search',
        name: 'Artifact catalog search',
        description: `Search the catalog of verified model artifacts and fetch them with checked digests: ${urlFor(urls, catalogContract.search)}, ${urlFor(urls, catalogContract.agentDiscovery)}. No credential needed.`,
        tags: ['catalog', 'models', 'artifacts', 'search'],
        examples: ['Find a small reranker', 'How do I download artifact X safely?'],
        inputModes: TEXT_AND_JSON,
        outputModes: ['application/json'],
      },
      {
        id: 'inference',
        name: 'Inference',
        description: `Chat completions, embeddings, rerank, summarize, RAG, classification and PDF or document extraction under ${urls.baseUrl}/v1 (scope inference:invoke). Every operation is in ${urlFor(urls, systemContract.openapi)}.`,
        tags: ['inference', 'llm', 'embeddings', 'pdf'],
        examples: ['Summarize this text', 'Extract the text of this PDF'],
        inputModes: TEXT_AND_JSON,
        outputModes: TEXT_AND_JSON,
        ...needsBearer(['inference:invoke']),
      },
    ],
  };
}
