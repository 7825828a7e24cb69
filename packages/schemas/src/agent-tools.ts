import { z } from 'zod';
import { jsonSchemaOf } from './openapi.ts';
import type { Principal } from './principal.ts';
import { honoursIdempotencyKey } from './retry.ts';
import { walkContract, type ContractTree, type ResponseSpec, type RouteDefinition } from './route.ts';

type JsonSchema = Record<string, unknown>;

/** Where a tool argument goes in the REST request. */
export type ArgumentPart = 'params' | 'query' | 'body' | 'header';

/** One contract operation as an MCP tool: the same input, output, auth and errors as its REST route. */
export interface AgentTool {
  /** From the key path: `inference.findSpecialist` -> `inference_find_specialist`. */
  readonly name: string;
  /** The contract key path (operationId). */
  readonly id: string;
  readonly route: RouteDefinition;
  readonly title: string;
  readonly description: string;
  /** The route's params, query and body (and its Idempotency-Key header) as one JSON Schema object. */
  readonly inputSchema: JsonSchema;
  /** The route's JSON success answer. */
  readonly outputSchema: JsonSchema;
  readonly annotations: { readonly title: string; readonly readOnlyHint: boolean; readonly destructiveHint: boolean; readonly idempotentHint: boolean };
  /** Each argument's place in the REST request; `bodyWhole`: the `body` argument is the whole body (a body that is not an object of named fields). */
  readonly placement: Readonly<Record<string, ArgumentPart>>;
  readonly bodyWhole: boolean;
}

/** `downloadPlan` -> `download_plan`; the key path joined with `_`. */
export function toolNameOf(id: string): string {
  return id
    .split('.')
    .map((key) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`))
    .join('_');
}

const successStatuses = (route: RouteDefinition) =>
  Object.keys(route.responses)
    .map(Number)
    .filter((status) => status >= 200 && status < 300);

/** The JSON schema a success status answers with, when it answers JSON (or may: JSON-or-stream, JSON-or-bytes). */
function jsonOf(spec: ResponseSpec | undefined): z.ZodType | undefined {
  if (!spec) return undefined;
  if (spec instanceof z.ZodType) return spec;
  return spec.kind === 'json-or-sse' || spec.kind === 'json-or-bytes' ? spec.json : undefined;
}

const destructiveKeys = new Set(['cancel', 'revoke', 'delete', 'tombstone']);
const DISCOVERY_TAGS = new Set(['discovery', 'system', 'oauth']);

/** A POST twin of a GET (`blackboard.getPost` beside `blackboard.get`, same path): the GET is the tool. */
function isPostTwin(route: RouteDefinition, contract: ContractTree): boolean {
  const routes = walkContract(contract);
  const id = routes.find((entry) => entry.route === route)?.id;
  if (!id?.endsWith('Post')) return false;
  const twin = routes.find((entry) => entry.id === id.slice(0, -'Post'.length));
  return twin?.route.method === 'GET' && twin.route.path === route.path;
}

/**
 * The rule, where a contract entry does not say (`agent.callable`): a route is a tool when it is
 * an operation that answers JSON, takes JSON, and is open to an agent. Not tools:
 * - answers that are not JSON (files, redirects, text documents) and bodies that are not JSON
 *   (uploads as bytes, OAuth forms);
 * - the protocol endpoints themselves (a JSON-RPC or OAuth error envelope: /a2a, /api/mcp, /oauth/*);
 * - discovery and system documents (tags discovery, system, oauth; paths under /.well-known/);
 * - what only the operator may do;
 * - purchases and spending (the `billing:write` scope: checkout, credit-funded calls);
 * - a POST twin of a GET on the same path, keyed `<get>Post` (the GET is the tool).
 */
export function isAgentCallable(route: RouteDefinition, contract?: ContractTree): boolean {
  if (route.agent?.callable !== undefined) return route.agent.callable;
  if (!successStatuses(route).some((status) => jsonOf(route.responses[status]))) return false;
  if (route.bodyEncoding === 'bytes' || route.bodyEncoding === 'form') return false;
  if (route.errorEnvelope === 'jsonrpc' || route.errorEnvelope === 'oauth') return false;
  if (route.path.startsWith('/.well-known/') || route.tags?.some((tag) => DISCOVERY_TAGS.has(tag))) return false;
  const kinds = route.auth.kind === 'public' ? undefined : route.auth.principals;
  if (kinds?.every((kind) => kind === 'operator')) return false;
  if (route.auth.kind === 'scoped' && route.auth.scopes.includes('billing:write')) return false;
  if (contract && route.method === 'POST' && isPostTwin(route, contract)) return false;
  return true;
}

/** Whether a principal may call the tool's route (the adapter's own check, read ahead for `tools/list`). */
export function principalMayCall(route: RouteDefinition, principal: Principal): boolean {
  const { auth } = route;
  if (auth.kind === 'public') return true;
  if (principal.kind === 'anonymous') return false;
  if (auth.kind === 'bearer' && principal.credential === 'developer_key') return false;
  if (auth.principals && !auth.principals.includes(principal.kind)) return false;
  if (auth.kind === 'scoped' && principal.kind !== 'operator') return auth.scopes.every((scope) => principal.scopes.includes(scope));
  return true;
}

/** A schema rendered with its named parts (`$defs`) apart and its root resolved. */
function rendered(schema: z.ZodType, io: 'input' | 'output', defs: Record<string, JsonSchema>): JsonSchema {
  const json = jsonSchemaOf(schema, io);
  delete json.$schema;
  Object.assign(defs, json.$defs ?? {});
  delete json.$defs;
  const ref = typeof json.$ref === 'string' ? json.$ref.split('/').pop()! : undefined;
  return ref && Object.keys(json).length === 1 ? { ...defs[ref]! } : json;
}

const isFieldObject = (json: JsonSchema) => json.type === 'object' && typeof json.properties === 'object' && !json.anyOf && !json.oneOf && !json.allOf;

function inputOf(id: string, route: RouteDefinition) {
  const defs: Record<string, JsonSchema> = {};
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const placement: Record<string, ArgumentPart> = {};
  let bodyWhole = false;
  const add = (part: ArgumentPart, name: string, schema: JsonSchema, isRequired: boolean) => {
    if (placement[name]) throw new Error(`Contract entry ${id}: argument "${name}" is in both its ${placement[name]} and its ${part}`);
    placement[name] = part;
    properties[name] = schema;
    if (isRequired) required.push(name);
  };
  for (const part of ['params', 'query', 'body'] as const) {
    const schema = route[part];
    if (!schema) continue;
    const json = rendered(schema, 'input', defs);
    if (!isFieldObject(json)) {
      if (part !== 'body') throw new Error(`Contract entry ${id}: its ${part} is not an object of named fields`);
      bodyWhole = true;
      add('body', 'body', json, true);
      continue;
    }
    const fields = json.properties as Record<string, JsonSchema>;
    const requiredFields = new Set((json.required ?? []) as string[]);
    // A tool answers JSON: a streamed answer is the REST route's other form, not an argument.
    const streams = part === 'body' && successStatuses(route).some((status) => (route.responses[status] as { kind?: string }).kind === 'json-or-sse');
    const omitted = new Set(route.agent?.omit ?? []);
    for (const [name, field] of Object.entries(fields))
      if (!(streams && name === 'stream') && !omitted.has(name)) add(part, name, field, requiredFields.has(name));
  }
  if (honoursIdempotencyKey(route)) {
    add(
      'header',
      'idempotency_key',
      { type: 'string', description: 'Sent as the Idempotency-Key header: a repeat with the same key answers the first answer.' },
      false,
    );
  }
  const inputSchema: JsonSchema = { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
  if (Object.keys(defs).length > 0) inputSchema.$defs = defs;
  return { inputSchema, placement, bodyWhole };
}

function outputOf(route: RouteDefinition): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  const variants = new Map<string, JsonSchema>();
  for (const status of successStatuses(route)) {
    const schema = jsonOf(route.responses[status]);
    if (!schema) continue;
    const json = rendered(schema, 'output', defs);
    variants.set(JSON.stringify(json), json);
  }
  const [only, ...more] = [...variants.values()];
  // MCP wants an object at the root of an output schema.
  const root: JsonSchema = more.length === 0 && only!.type === 'object' ? only! : { type: 'object', anyOf: [only!, ...more] };
  return Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root;
}

function describe(route: RouteDefinition): string {
  const needs =
    route.auth.kind === 'public'
      ? 'No credential needed.'
      : route.auth.kind === 'bearer'
        ? `Needs a bearer token of ${route.auth.principals.join(' or ')}.`
        : route.auth.scopes.length > 0
          ? `Needs the scope${route.auth.scopes.length > 1 ? 's' : ''} ${route.auth.scopes.join(', ')}.`
          : 'Needs a credential.';
  return [route.summary, route.description, `REST twin: ${route.method} ${route.path}. ${needs}`].filter(Boolean).join('\n\n');
}

/**
 * The tools of each contract, rendered once: rendering every tool's JSON Schemas is most of what a
 * tool catalogue costs, and a server builds two (the MCP endpoint's and discovery's), both at
 * start (about a tenth of a cold start). The array and its tools are shared: never change them.
 */
const renderedTools = new WeakMap<ContractTree, AgentTool[]>();

/** Every agent-callable operation of the contract as a tool, in contract order (one shared array per contract). */
export function agentTools(contract: ContractTree): AgentTool[] {
  let tools = renderedTools.get(contract);
  if (!tools) {
    tools = renderTools(contract);
    renderedTools.set(contract, tools);
  }
  return tools;
}

function renderTools(contract: ContractTree): AgentTool[] {
  const tools: AgentTool[] = [];
  for (const { id, route } of walkContract(contract)) {
    if (!isAgentCallable(route, contract)) continue;
    const name = toolNameOf(id);
    const keyName = id.split('.').pop()!;
    const readOnly = route.method === 'GET';
    tools.push({
      name,
      id,
      route,
      title: route.summary,
      description: describe(route),
      ...inputOf(id, route),
      outputSchema: outputOf(route),
      annotations: {
        title: route.summary,
        readOnlyHint: readOnly,
        destructiveHint: !readOnly && (route.agent?.destructive ?? (route.method === 'DELETE' || destructiveKeys.has(keyName))),
        idempotentHint: readOnly || route.method === 'PUT' || route.method === 'DELETE' || honoursIdempotencyKey(route),
      },
    });
  }
  return tools;
}
