import { z } from 'zod';

/** A2A protocol versions `/a2a` answers: 1.0 (PascalCase methods) and 0.3 (`message/send`). */
export const A2A_PROTOCOL_VERSIONS = ['1.0', '0.3'] as const;

const A2aInterface = z.object({ url: z.string(), protocolBinding: z.literal('JSONRPC'), tenant: z.string(), protocolVersion: z.enum(A2A_PROTOCOL_VERSIONS) });

const A2aSkill = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  examples: z.array(z.string()),
  inputModes: z.array(z.string()),
  outputModes: z.array(z.string()),
  /** 0.3 spelling of a skill's security requirement. */
  security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
  /** 1.0 spelling of the same requirement. */
  securityRequirements: z.array(z.object({ schemes: z.record(z.string(), z.object({ list: z.array(z.string()) })) })).optional(),
});

/**
 * The A2A agent card, one body valid for both protocol versions (the `@a2a-js/sdk` hybrid card):
 * 0.3's top-level `protocolVersion`, `url` and `preferredTransport` next to 1.0's
 * `supportedInterfaces`, which lists `/a2a` once per version. A 0.3 reader ignores
 * `supportedInterfaces`; a 1.0 reader prefers it. Each security scheme carries both spellings
 * (0.3's `type`/`scheme`/`flows`, 1.0's `httpAuthSecurityScheme`/`oauth2SecurityScheme`), which
 * the two readers ignore in each other's case. No card-level security: the trial needs no credential;
 * the skills that do say so.
 */
export const A2aAgentCard = z
  .looseObject({
    protocolVersion: z.string(),
    name: z.string(),
    description: z.string(),
    url: z.string(),
    preferredTransport: z.literal('JSONRPC'),
    supportedInterfaces: z.array(A2aInterface).min(1),
    version: z.string(),
    provider: z.object({ organization: z.string(), url: z.string() }),
    documentationUrl: z.string(),
    capabilities: z.looseObject({ streaming: z.boolean(), pushNotifications: z.boolean(), extensions: z.array(z.unknown()) }),
    securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())),
    defaultInputModes: z.array(z.string()),
    defaultOutputModes: z.array(z.string()),
    skills: z.array(A2aSkill).min(1),
  })
  .meta({ id: 'A2aAgentCard' });
export type A2aAgentCard = z.infer<typeof A2aAgentCard>;

/** `GET /a2a`: what a crawler probing the RPC URL needs to find the card and speak to it. */
export const A2aEndpointInfo = z
  .object({
    name: z.string(),
    description: z.string(),
    protocol: z.literal('A2A'),
    protocolVersions: z.array(z.enum(A2A_PROTOCOL_VERSIONS)),
    transport: z.literal('JSONRPC'),
    endpoint: z.object({ method: z.literal('POST'), url: z.string(), contentType: z.literal('application/json') }),
    agentCard: z.string(),
    agentCardAliases: z.array(z.string()),
    methods: z.array(z.object({ method: z.string(), protocolVersion: z.enum(A2A_PROTOCOL_VERSIONS), description: z.string() })),
    example: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'A2aEndpointInfo' });
export type A2aEndpointInfo = z.infer<typeof A2aEndpointInfo>;
