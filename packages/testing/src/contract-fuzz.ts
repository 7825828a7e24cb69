import fc from 'fast-check';
import { z } from 'zod';
import { BayRunErrorEnvelope, ErrorBody, errorCodes, HTTPValidationError, JsonRpcError, type RouteDefinition } from '@svc/schemas';
import { invalidQueryVariants, invalidVariants, validValue, type JsonSchema } from './schema-arbitrary.ts';

/**
 * One fuzz request, built from a contract entry alone, and the checks every answer must pass.
 * `invalid` names why the request certainly breaks the contract (a 2xx to it is a defect);
 * undefined means it may be valid.
 */
export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  invalid?: string;
  /** What was sent, for the failure report. */
  label: string;
}

export interface FuzzTarget {
  id: string;
  route: RouteDefinition;
  root: string;
  /** The route's parts as JSON Schemas (input side), or undefined when the route has none. */
  schemas: { params?: JsonSchema; query?: JsonSchema; body?: JsonSchema };
}

/** Credentials a request may carry; the suite fills in real ones. */
export type Credentials = Record<string, string | undefined>;

const toSchema = (schema: z.ZodType | undefined): JsonSchema | undefined =>
  schema ? (z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema) : undefined;

/** Any JSON-RPC 2.0 error answer. */
const JsonRpcEnvelope = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.object({ code: z.unknown(), request_id: z.unknown() }).loose().optional() }),
});

export function fuzzTarget(id: string, route: RouteDefinition, root: string): FuzzTarget {
  return { id, route, root, schemas: { params: toSchema(route.params), query: toSchema(route.query), body: toSchema(route.body) } };
}

/** Percent-encodes text; a lone surrogate (no UTF-8 exists for it) becomes its WTF-8 bytes, which no server can decode. */
function encodeSegment(value: string): string {
  return value
    .split(/([\ud800-\udfff])/)
    .map((part) => {
      if (part.length !== 1 || !/[\ud800-\udfff]/.test(part)) return encodeURIComponent(part);
      const unit = part.charCodeAt(0);
      return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    })
    .join('');
}

/** `/api/downloads/:id/*path` filled; each value encoded, a wildcard's slashes kept. */
export function fillPath(path: string, params: Record<string, unknown>): string {
  return path.replace(/([:*])([A-Za-z0-9_]+)/g, (_, sign: string, name: string) => {
    const value = asText(params[name] ?? 'x');
    return sign === '*' ? value.split('/').map(encodeSegment).join('/') : encodeSegment(value);
  });
}

/** Any generated value as text (records may have no prototype, so no String() of them). */
const asText = (value: unknown): string => (typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value));

function queryString(query: Record<string, unknown>, duplicate: boolean): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(name, asText(one));
    if (duplicate) search.append(name, asText(Array.isArray(value) ? value[0] : value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Strings every text member may be given: empty, huge, NUL, a lone surrogate, right-to-left marks. */
const hostileStrings = fc.constantFrom(
  '',
  'x'.repeat(70_000),
  'nul\u0000inside',
  'lone \ud800 surrogate',
  '\u202e\u0000\uffff',
  '../../etc/passwd',
  '%00%2e%2e',
  '{"$gt":""}',
);

export function encodeBody(route: RouteDefinition, value: unknown): { body: string | Uint8Array; contentType: string } {
  switch (route.bodyEncoding ?? 'json') {
    case 'form': {
      const form = new URLSearchParams();
      if (value && typeof value === 'object' && !Array.isArray(value))
        for (const [name, member] of Object.entries(value)) if (member !== undefined) form.append(name, asText(member));
      return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
    }
    case 'bytes':
      return {
        body: value instanceof Uint8Array ? value : new TextEncoder().encode(asText(value)),
        contentType: route.bodyMediaTypes?.[0] ?? 'application/octet-stream',
      };
    default:
      return { body: JSON.stringify(value), contentType: 'application/json' };
  }
}

/** The arbitrary of every request the fuzzer sends to one route: valid, mutated and hostile. */
export function requestArbitrary(target: FuzzTarget, credentials: Credentials): fc.Arbitrary<FuzzRequest> {
  const { route, schemas } = target;
  const partOf = (schema: JsonSchema | undefined) => (schema ? validValue(schema, schema) : fc.constant(undefined));
  const bodyValue = route.bodyEncoding === 'bytes' ? fc.uint8Array({ maxLength: 2048 }) : partOf(schemas.body);
  const credentialNames = Object.keys(credentials);
  return fc
    .record({
      params: partOf(schemas.params),
      query: partOf(schemas.query),
      body: bodyValue,
      credential: fc.constantFrom(...credentialNames),
      mutation: fc.constantFrom('none', 'none', 'params', 'query', 'body', 'hostile-string', 'duplicate-query', 'content-type', 'malformed-json', 'deep-json'),
      pick: fc.nat(),
      hostile: hostileStrings,
    })
    .map(({ params, query, body, credential, mutation, pick, hostile }) => {
      let invalid: string | undefined;
      let paramValues = (params ?? {}) as Record<string, unknown>;
      let queryValues = (query ?? {}) as Record<string, unknown>;
      let bodyValueOut: unknown = body;
      let contentTypeOverride: string | null | undefined;
      let rawBody: string | undefined;
      const choose = <T>(list: T[]): T | undefined => (list.length ? list[pick % list.length] : undefined);
      if (mutation === 'params' && schemas.params) {
        const variant = choose(
          invalidVariants(schemas.params, schemas.params, paramValues).filter((one) => one.value && typeof one.value === 'object' && !Array.isArray(one.value)),
        );
        if (variant) [paramValues, invalid] = [variant.value as Record<string, unknown>, `path: ${variant.why}`];
      } else if (mutation === 'query' && schemas.query) {
        const variant = choose(invalidQueryVariants(schemas.query, schemas.query, queryValues));
        if (variant) [queryValues, invalid] = [variant.value, `query: ${variant.why}`];
      } else if (mutation === 'body' && schemas.body && route.bodyEncoding !== 'bytes') {
        // A form carries text only: only "not an object" and missing members are certain there.
        const variants = invalidVariants(schemas.body, schemas.body, body).filter((one) => route.bodyEncoding !== 'form' || one.why.includes('missing'));
        const variant = choose(variants);
        if (variant) [bodyValueOut, invalid] = [variant.value, `body: ${variant.why}`];
      } else if (mutation === 'hostile-string') {
        // Every text member the request has gets the same hostile string; validity is unknown.
        const replace = (values: Record<string, unknown>) =>
          Object.fromEntries(Object.entries(values).map(([name, value]) => [name, typeof value === 'string' ? hostile : value]));
        paramValues = replace(paramValues);
        queryValues = replace(queryValues);
        if (bodyValueOut && typeof bodyValueOut === 'object' && !(bodyValueOut instanceof Uint8Array) && !Array.isArray(bodyValueOut))
          bodyValueOut = replace(bodyValueOut as Record<string, unknown>);
      } else if (mutation === 'content-type' && route.body) {
        contentTypeOverride = choose([null, 'text/plain', 'multipart/form-data; boundary=x', 'application/xml']);
        invalid = `Content-Type ${contentTypeOverride ?? '(none)'}`;
        if (bodyValueOut === undefined) bodyValueOut = {};
      } else if (mutation === 'malformed-json' && route.body && (route.bodyEncoding ?? 'json') === 'json') {
        rawBody = choose(['{"a":', '{"a":1,}', "{'a':1}", '\u0000', '[1,2', 'NaN']);
        invalid = 'malformed JSON';
      } else if (mutation === 'deep-json' && route.body && (route.bodyEncoding ?? 'json') === 'json') {
        const depth = choose([1_000, 10_000, 100_000])!;
        rawBody = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      }
      const url = `${target.root}${fillPath(route.path, paramValues)}${queryString(queryValues, mutation === 'duplicate-query')}`;
      const headers: Record<string, string> = {};
      const token = credentials[credential];
      if (token) headers.authorization = token;
      let sentBody: string | Uint8Array | undefined;
      if (route.body && (bodyValueOut !== undefined || rawBody !== undefined)) {
        const encoded = rawBody !== undefined ? { body: rawBody, contentType: 'application/json' } : encodeBody(route, bodyValueOut);
        sentBody = encoded.body;
        if (contentTypeOverride !== null) headers['content-type'] = contentTypeOverride ?? encoded.contentType;
      }
      if (invalid === 'Content-Type (none)' && !sentBody) invalid = undefined;
      const shown = typeof sentBody === 'string' ? sentBody.slice(0, 300) : sentBody ? `<${sentBody.length} bytes>` : '';
      return {
        method: route.method,
        url,
        headers,
        body: sentBody,
        invalid,
        label: `${route.method} ${url.slice(0, 300)} [${credential}, ${mutation}] ${shown}`,
      };
    });
}

/** Requests no generator needs to vary: every other method, an oversized body, an oversized header. */
export function fixedRequests(target: FuzzTarget, otherMethods: string[], maxHeaderBytes: number): FuzzRequest[] {
  const { route } = target;
  const url = `${target.root}${fillPath(route.path, {})}`;
  const requests: FuzzRequest[] = otherMethods.map((method) => ({
    method,
    url,
    headers: {},
    body: method === 'GET' || method === 'HEAD' ? undefined : '{}',
    invalid: `method ${method}`,
    label: `${method} ${url}`,
  }));
  if (route.body) {
    const limit = route.bodyLimitBytes ?? 1_048_576;
    const contentType =
      route.bodyEncoding === 'bytes'
        ? (route.bodyMediaTypes?.[0] ?? 'application/octet-stream')
        : route.bodyEncoding === 'form'
          ? 'application/x-www-form-urlencoded'
          : 'application/json';
    // Past a few MiB only the declared length is sent in full: the cap is decided from it first.
    const whole = limit + 1 <= 4 * 1_048_576;
    const oversized = new Uint8Array(whole ? limit + 1 : 1024).fill(0x20);
    requests.push({
      method: route.method,
      url,
      headers: { 'content-type': contentType, 'content-length': String(limit + 1) },
      body: oversized,
      invalid: `a body of ${limit + 1} bytes, over the ${limit}-byte cap`,
      label: `${route.method} ${url} <${limit + 1} bytes${whole ? '' : ' declared'}>`,
    });
  }
  // Just past the cap and with no body: the server reads all of it before refusing, so the
  // refusal is not lost to a reset of unread bytes.
  requests.push({
    method: route.method,
    url,
    headers: { 'x-fuzz-filler': 'h'.repeat(maxHeaderBytes + 64) },
    invalid: 'headers over the cap',
    label: `${route.method} ${url} <headers over the ${maxHeaderBytes}-byte cap>`,
  });
  return requests;
}

export interface FuzzAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** 503 answers that are a documented state of the service, not a defect (posting paused, a full PDF queue). */
const DESIGNED_UNAVAILABLE = new Set(
  Object.entries(errorCodes)
    .filter(([code, status]) => status === 503 && code !== 'service_unavailable')
    .map(([code]) => code),
);

/** Every check of one answer; the problem found, or undefined when it passes. */
export function checkAnswer(target: FuzzTarget, request: FuzzRequest, answer: FuzzAnswer): string | undefined {
  const { route } = target;
  const requestId = answer.headers.get('x-request-id');
  if (answer.headers.get('x-content-type-options') !== 'nosniff') return 'no X-Content-Type-Options: nosniff';
  let json: unknown;
  const contentType = answer.headers.get('content-type') ?? '';
  if (contentType.startsWith('application/json') && answer.text) {
    try {
      json = JSON.parse(answer.text);
    } catch {
      return `a JSON content type with a body that is not JSON: ${answer.text.slice(0, 200)}`;
    }
  }
  const code = (json as { code?: unknown } | undefined)?.code;
  if (answer.status >= 500 && !(answer.status === 503 && typeof code === 'string' && DESIGNED_UNAVAILABLE.has(code.split(':')[0]!)))
    return `a ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (request.invalid && answer.status < 300) return `a ${answer.status} to an invalid request (${request.invalid})`;
  const spec = route.responses[answer.status];
  if (answer.status >= 400) {
    if (!requestId) return 'an error without x-request-id';
    if (request.method === 'HEAD') return undefined;
    // A route-declared error shape (OAuth's) or the common one; both carry a stable code and the request id.
    // Another method on the path, or headers refused before routing (431), never reach the
    // route: the router's or the listener's own error body answers.
    const reachedRoute = (request.method === route.method || (request.method === 'HEAD' && route.method === 'GET')) && answer.status !== 431;
    const routeSpec = reachedRoute ? spec : undefined;
    // A JSON-RPC endpoint answers every error as a JSON-RPC error object. The adapter's own refusals
    // carry svc's code and request id in `data` (JsonRpcError); the MCP SDK's protocol errors need not.
    if (reachedRoute && route.errorEnvelope === 'jsonrpc') {
      const rpc = JsonRpcEnvelope.safeParse(json);
      if (!rpc.success) return `a JSON-RPC error body breaking its schema: ${z.prettifyError(rpc.error)} in ${answer.text.slice(0, 300)}`;
      const data = rpc.data.error.data;
      if (data === undefined) return undefined;
      const ours = JsonRpcError.safeParse(json);
      if (!ours.success) return `a JSON-RPC error with data breaking JsonRpcError: ${z.prettifyError(ours.error)}`;
      if (!(String(data.code).split(':')[0]! in errorCodes)) return `a JSON-RPC error code not in the errors table: ${String(data.code)}`;
      if (data.request_id !== requestId) return `request_id ${String(data.request_id)} differs from x-request-id ${requestId}`;
      return undefined;
    }
    const schema =
      routeSpec instanceof z.ZodType
        ? routeSpec
        : reachedRoute && route.errorEnvelope === 'bayrun'
          ? BayRunErrorEnvelope
          : answer.status === 422 && route.surface === 'base'
            ? HTTPValidationError
            : ErrorBody;
    if (routeSpec && !(routeSpec instanceof z.ZodType)) return undefined;
    const checked = schema.safeParse(json);
    if (!checked.success) return `an error body breaking its schema: ${z.prettifyError(checked.error)} in ${answer.text.slice(0, 300)}`;
    const body = checked.data as { code?: string; request_id?: string };
    if (typeof body.code !== 'string' || !(body.code.split(':')[0]! in errorCodes)) return `an error code not in the errors table: ${String(body.code)}`;
    if (body.request_id !== requestId) return `request_id ${body.request_id} differs from x-request-id ${requestId}`;
    return undefined;
  }
  if (!spec) return `status ${answer.status}, which the contract does not declare`;
  if (request.method === 'HEAD') return undefined;
  const jsonSpec =
    spec instanceof z.ZodType
      ? spec
      : (spec.kind === 'json-or-sse' && !contentType.startsWith('text/event-stream')) ||
          (spec.kind === 'json-or-bytes' && contentType.startsWith('application/json'))
        ? spec.json
        : undefined;
  if (jsonSpec) {
    const checked = jsonSpec.safeParse(json);
    if (!checked.success) return `a ${answer.status} body breaking the contract: ${z.prettifyError(checked.error)}`;
  }
  return undefined;
}
