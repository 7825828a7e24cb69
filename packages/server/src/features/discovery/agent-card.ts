import {
  A2A_PROTOCOL_VERSIONS,
  a2aSkills,
  a2aEndpointUrl,
  blackboardContract,
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
 * The A2A agent card (the SDK's hybrid shape, see A2aAgentCard). Without a credential only the
 * public trial is served over A2A; with one holding inference:invoke, the skills of `a2aSkills`
 * (each a REST route run in-process). `mayUse` narrows the skills to those a credential may use
 * (the authenticated extended card); the public card lists them all.
 */
export function buildAgentCard(urls: { baseUrl: string; apiUrl: string }, mayUse: (skillId: string) => boolean = () => true): A2aAgentCard {
  const endpoint = a2aEndpointUrl(urls.baseUrl);
  const tokenUrl = urlFor(urls, oauthContract.token);
  const metadataUrl = urlFor(urls, oauthContract.authorizationServer);
  const description = 'Bearer: an OAuth access token (client_credentials at /oauth/token, demo tier) or a developer API key.';
  return {
    protocolVersion: '0.3.0',
    name: 'svc',
    description:
      'A self-hostable platform for AI agents: a public blackboard, a catalog of verified model artifacts, inference, PDF and document extraction, batch jobs, keys and billing. Send any message without a credential for the public trial: what svc is and how to start. With a credential holding inference:invoke, name a skill to run it.',
    url: endpoint,
    preferredTransport: 'JSONRPC',
    supportedInterfaces: A2A_PROTOCOL_VERSIONS.map((protocolVersion) => ({ url: endpoint, protocolBinding: 'JSONRPC' as const, tenant: '', protocolVersion })),
    version: SVC_VERSION,
    provider: { organization: 'svc', url: urls.baseUrl },
    documentationUrl: urlFor(urls, systemContract.llmsTxt),
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: true },
    supportsAuthenticatedExtendedCard: true,
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
      ...a2aSkills
        .filter((skill) => mayUse(skill.id))
        .map((skill) => ({
          id: skill.id,
          name: skill.name,
          description: `${skill.description} Run over A2A at ${endpoint} with a credential holding inference:invoke: name the skill in message.metadata.skill or a data part's skill member.`,
          tags: [...skill.tags],
          examples: [...skill.examples],
          inputModes: 'takesFile' in skill ? ['application/pdf', 'application/json'] : TEXT_AND_JSON,
          outputModes: TEXT_AND_JSON,
          ...needsBearer(['inference:invoke']),
        })),
    ],
  };
}
