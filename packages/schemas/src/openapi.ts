import { z } from 'zod';
import { BayRunErrorEnvelope, ErrorBody, HTTPValidationError, JsonRpcError } from './errors.ts';
import { bodyRulesDescription } from './body-rules.ts';
import { walkContract, toOpenApiPath, type ContractTree, type ResponseSpec, type RouteDefinition } from './route.ts';
import { retryableStatusesFor, retryRule } from './retry.ts';

type JsonSchema = Record<string, unknown>;

/** The one zod-to-JSON-Schema conversion of the contract (OpenAPI documents and MCP tools): draft 2020-12, named schemas under `$defs`. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
}

export interface OpenApiOptions {
  title?: string;
  version: string;
  description?: string;
  baseUrl: string;
  apiUrl: string;
  /** Links to the discovery documents (MCP server card, A2A card, ...), as `x-svc-discovery`. */
  discovery?: Record<string, string>;
}

/**
 * Collects named schemas (zod `.meta({ id })`) into `components.schemas`. The same id may render
 * differently as input and as output (defaults, transforms); the input rendering then gets an
 * `Input` suffix instead of silently overwriting the other.
 */
class ComponentStore {
  readonly schemas: Record<string, JsonSchema> = {};

  render(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const json = jsonSchemaOf(schema, io);
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    const renames = new Map<string, string>();
    for (const [id, def] of Object.entries(defs)) {
      const existing = this.schemas[id];
      if (!existing || JSON.stringify(existing) === JSON.stringify(def)) {
        this.schemas[id] = def;
        continue;
      }
      const alternative = `${id}${io === 'input' ? 'Input' : 'Output'}`;
      renames.set(id, alternative);
      this.schemas[alternative] = def;
    }
    const relinked = JSON.stringify(json).replace(/"#\/\$defs\/([^"]+)"/g, (_m, id: string) => `"#/components/schemas/${renames.get(id) ?? id}"`);
    for (const [id, def] of Object.entries(this.schemas)) {
      this.schemas[id] = JSON.parse(
        JSON.stringify(def).replace(/"#\/\$defs\/([^"]+)"/g, (_m, ref: string) => `"#/components/schemas/${renames.get(ref) ?? ref}"`),
      );
    }
    return JSON.parse(relinked) as JsonSchema;
  }
}

function objectMembers(store: ComponentStore, schema: z.ZodType | undefined): Array<{ name: string; required: boolean; schema: JsonSchema }> {
  if (!schema) return [];
  let json = store.render(schema, 'input');
  if (typeof json.$ref === 'string') json = store.schemas[json.$ref.split('/').pop()!] ?? json;
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, member]) => ({ name, required: required.has(name), schema: member }));
}

function responseContent(store: ComponentStore, spec: ResponseSpec): Record<string, unknown> | undefined {
  if (spec instanceof z.ZodType) return { 'application/json': { schema: store.render(spec, 'output') } };
  switch (spec.kind) {
    case 'text':
      return { [spec.contentType.split(';')[0]!]: { schema: { type: 'string' } } };
    case 'bytes':
      return { [spec.contentType]: { schema: { type: 'string', format: 'binary' } } };
    case 'sse':
      return { 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events', 'x-svc-event': store.render(spec.event, 'output') } } };
    case 'json-or-sse':
      return {
        'application/json': { schema: store.render(spec.json, 'output') },
        'text/event-stream': {
          schema: {
            type: 'string',
            description: 'Server-sent events (when the request sets `stream: true`)',
            'x-svc-event': store.render(spec.event, 'output'),
          },
        },
      };
    case 'json-or-bytes':
      return {
        'application/json': { schema: store.render(spec.json, 'output') },
        [spec.contentType.split(';')[0]!]: { schema: { type: 'string', description: 'When the request asks for this format' } },
      };
    default:
      return undefined;
  }
}

const errorRef = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });

const standardErrorText: Record<number, string> = {
  400: 'Malformed request',
  401: 'Authentication required; `WWW-Authenticate` says how',
  403: 'The credential lacks a required scope or is not accepted here',
  404: 'Not found',
  408: 'Request body not received in time',
  413: 'Request body over the byte cap',
  415: 'Unsupported media type',
  422: 'Validation failed',
  429: 'Rate limit exceeded; `Retry-After` says when to retry',
  503: 'Service unavailable',
};

function errorStatuses(route: RouteDefinition): number[] {
  const statuses = new Set<number>(route.errors ?? []);
  if (route.auth.kind !== 'public') statuses.add(401).add(403);
  // Limits per key and principal kind are enforced on every scoped route (docs/limits.md).
  if (route.auth.kind === 'scoped') statuses.add(429);
  // A JSON-RPC route answers invalid input as a 400 JSON-RPC error, never 422.
  if ((route.params || route.query || route.body || route.headers) && route.errorEnvelope !== 'jsonrpc') statuses.add(422);
  // Every body has a deadline and a place in the server's body budget (bodyRulesDescription).
  if (route.body) statuses.add(400).add(408).add(413).add(415).add(503);
  return [...statuses].filter((status) => !(status in route.responses)).sort();
}

function security(route: RouteDefinition): Array<Record<string, string[]>> | undefined {
  if (route.auth.kind === 'public') return [];
  if (route.auth.kind === 'bearer') return [{ BearerAuth: [] }];
  return [{ BearerAuth: [...route.auth.scopes] }, { DeveloperApiKey: [...route.auth.scopes] }];
}

/** OpenAPI 3.1 from the contract: the contract key path is the operationId. */
export function buildOpenApiDocument(contract: ContractTree, options: OpenApiOptions): Record<string, unknown> {
  const store = new ComponentStore();
  // The error bodies are referenced by name from every operation, so they are registered first.
  store.render(z.object({ a: ErrorBody, b: HTTPValidationError, c: BayRunErrorEnvelope, d: JsonRpcError }), 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  const seen = new Set<string>();
  for (const { id, route } of walkContract(contract)) {
    if (seen.has(id)) throw new Error(`Duplicate operationId ${id}`);
    seen.add(id);
    const parameters = [
      ...objectMembers(store, route.params).map((m) => ({ name: m.name, in: 'path', required: true, schema: m.schema })),
      ...objectMembers(store, route.query).map((m) => ({ name: m.name, in: 'query', required: m.required, schema: m.schema })),
      ...objectMembers(store, route.headers).map((m) => ({ name: m.name, in: 'header', required: m.required, schema: m.schema })),
    ];
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const content = responseContent(store, spec);
      const isRedirect = !(spec instanceof z.ZodType) && spec.kind === 'redirect';
      responses[status] = {
        description: isRedirect ? 'Redirect; see the `Location` header' : `${route.summary} (${status})`,
        ...(isRedirect ? { headers: { Location: { schema: { type: 'string' } } } } : {}),
        ...(content ? { content } : {}),
      };
    }
    const errorSchema = route.errorEnvelope === 'bayrun' ? 'BayRunErrorEnvelope' : route.errorEnvelope === 'jsonrpc' ? 'JsonRpcError' : 'ErrorBody';
    for (const status of errorStatuses(route)) {
      const schema = status === 422 && (route.errorEnvelope ?? 'standard') === 'standard' ? 'HTTPValidationError' : errorSchema;
      responses[String(status)] = { description: standardErrorText[status] ?? `Error ${status}`, content: errorRef(schema) };
    }
    let requestBody: Record<string, unknown> | undefined;
    if (route.body) {
      const encoding = route.bodyEncoding ?? 'json';
      const content =
        encoding === 'bytes'
          ? Object.fromEntries((route.bodyMediaTypes ?? ['application/octet-stream']).map((type) => [type, { schema: { type: 'string', format: 'binary' } }]))
          : { [encoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: { schema: store.render(route.body, 'input') } };
      requestBody = { required: true, description: bodyRulesDescription(route), content };
    }
    const operation: Record<string, unknown> = {
      operationId: id,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [...(route.tags ?? [id.split('.')[0]!])],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
      security: security(route),
      ...(route.surface === 'api' && options.apiUrl !== options.baseUrl ? { servers: [{ url: options.apiUrl }] } : {}),
      'x-svc-surface': route.surface,
      'x-svc-auth': route.auth,
      ...(route.paging ? { 'x-svc-paging': route.paging } : {}),
      'x-svc-retryable-statuses': retryableStatusesFor(route),
    };
    const path = toOpenApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.1',
    info: { title: options.title ?? 'svc', version: options.version, description: [options.description, retryRule].filter(Boolean).join('\n\n') },
    servers: [{ url: options.baseUrl, description: 'base surface' }],
    ...(options.discovery ? { 'x-svc-discovery': options.discovery } : {}),
    paths,
    components: {
      schemas: store.schemas,
      securitySchemes: {
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'Operator token or OAuth access token' },
        DeveloperApiKey: { type: 'http', scheme: 'bearer', bearerFormat: 'svc developer key (svc_dk_...)', description: 'Developer API key sent as a bearer' },
      },
    },
  };
}
