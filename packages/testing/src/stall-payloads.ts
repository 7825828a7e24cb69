import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { z } from 'zod';
import { blackboardLimits, bodyRules, contract, walkContract, type RouteDefinition } from '@svc/schemas';
import { encodeBody, fillPath, type FuzzTarget } from './contract-fuzz.ts';
import { resolve, validValue, type JsonSchema } from './schema-arbitrary.ts';
import { STALL_SHAPES, stallText, type StallShape } from './stall-shapes.ts';

/**
 * Adversarial payloads for the stall suite, built from a route's own schemas at the contract's
 * maximum sizes: every free text member (no enum, pattern or format to satisfy) carries a shape
 * known to make naive regexes, parsers or quadratic metrics stall, each member as long as its
 * `maxLength` allows and the body cap leaves room for; arrays take `maxItems` (or one long item);
 * members that take any JSON carry deep arrays just under and just over the depth cap.
 * The named inputs come first on their routes.
 */

export { STALL_SHAPES, stallText, type StallShape } from './stall-shapes.ts';

/** The depth cap of JSON bodies the edge enforces, as the contract states it. */
export const JSON_DEPTH_CAP = bodyRules.maxJsonDepth;

export const deepArray = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);

/** Who must send a request so it reaches the handler rather than the auth refusal. */
export type CredentialKind = 'none' | 'operator' | 'agent' | 'developerKey';

export function credentialFor(route: RouteDefinition): CredentialKind {
  const { auth } = route;
  if (auth.kind === 'public') return 'none';
  const principals = 'principals' in auth ? (auth.principals as readonly string[] | undefined) : undefined;
  if (principals?.includes('operator')) return 'operator';
  if (principals?.includes('agent')) return 'agent';
  return 'developerKey';
}

export interface StallPayload {
  /** What the payload is, for the table. */
  kind: string;
  method: string;
  /** Path and query, to append to the route's root. */
  path: string;
  body?: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
  credential: CredentialKind;
}

// ---- the skeleton: a value of the schema with its free text and free JSON left as slots ----

class TextSlot {
  length = 0;
  readonly maxLength: number;
  constructor(maxLength: number) {
    this.maxLength = maxLength;
  }
}
class AnySlot {
  readonly depth: number;
  constructor(depth: number) {
    this.depth = depth;
  }
}

interface Build {
  root: JsonSchema;
  /** Which alternative of every anyOf/oneOf, and whether arrays go wide or long. */
  pick: number;
  wide: boolean;
  /** Optional text members capped under LONG_TEXT are left out unless this is set. */
  everyMember: boolean;
  texts: TextSlot[];
  anys: AnySlot[];
}

const isFreeText = (schema: JsonSchema): boolean =>
  schema.type === 'string' && schema.enum === undefined && schema.const === undefined && schema.pattern === undefined && schema.format === undefined;

/**
 * Short optional members are often names a refinement checks (a task, a label): filled, they get
 * the payload refused before the handler. Most payloads leave them out; short shapes fill them too.
 */
const LONG_TEXT = 1024;
const isLongText = (schema: JsonSchema, everyMember: boolean) =>
  isFreeText(schema) && (everyMember || (schema.maxLength ?? Number.POSITIVE_INFINITY) >= LONG_TEXT);

/** Holds long free text (a text member, a list of them, a union with one): such optional members are filled too. */
function holdsText(schema: JsonSchema, root: JsonSchema, everyMember: boolean, depth = 0): boolean {
  const resolved = resolve(schema, root);
  if (depth > 3) return false;
  if (isLongText(resolved, everyMember)) return true;
  if (resolved.type === 'array' && resolved.items) return holdsText(resolved.items, root, everyMember, depth + 1);
  return (resolved.anyOf ?? resolved.oneOf ?? []).some((option) => holdsText(option, root, everyMember, depth + 1));
}

/** A fixed valid value for constrained text and other leaves: the same every run. */
function fixedValue(schema: JsonSchema, root: JsonSchema): unknown {
  // A URL member must not send the server to the network: loopback is refused before any fetch.
  if (schema.format === 'uri' || schema.format === 'url') return 'https://127.0.0.1/stall';
  // Drawing from a pattern takes fast-check a while: once per schema.
  const key = JSON.stringify(schema);
  if (!fixedValues.has(key)) fixedValues.set(key, fc.sample(validValue(schema, root), { numRuns: 1, seed: 26 })[0]);
  return fixedValues.get(key);
}
const fixedValues = new Map<string, unknown>();

/** resolve_link (and any alternative naming it) fetches pages from the network: not sent. */
const reachesNetwork = (schema: JsonSchema): boolean => JSON.stringify(schema).includes('"resolve_link"');

function skeleton(schema: JsonSchema | boolean | undefined, build: Build, depth: number): unknown {
  const resolved = resolve(schema, build.root);
  if (depth > 12) return null;
  if (resolved.const !== undefined) return resolved.const;
  if (resolved.enum) return resolved.enum[build.pick % resolved.enum.length];
  const alternatives = (resolved.anyOf ?? resolved.oneOf)?.filter(
    (option) => resolve(option, build.root).type !== 'null' && !reachesNetwork(resolve(option, build.root)),
  );
  if (alternatives?.length) return skeleton(alternatives[build.pick % alternatives.length], build, depth);
  if (resolved.allOf?.length) return skeleton(resolved.allOf[0], build, depth);
  const type = Array.isArray(resolved.type) ? resolved.type.find((one) => one !== 'null') : (resolved.type ?? (resolved.properties ? 'object' : undefined));
  switch (type) {
    case 'string': {
      if (!isFreeText(resolved)) return fixedValue(resolved, build.root);
      const slot = new TextSlot(resolved.maxLength ?? Number.POSITIVE_INFINITY);
      build.texts.push(slot);
      return slot;
    }
    case 'integer':
    case 'number':
      return resolved.maximum ?? (resolved.exclusiveMaximum !== undefined ? resolved.exclusiveMaximum - 1 : (resolved.minimum ?? 1));
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      if (resolved.prefixItems) return resolved.prefixItems.map((item) => skeleton(item, build, depth + 1));
      const least = Math.max(resolved.minItems ?? 0, 1);
      const count = build.wide ? Math.min(resolved.maxItems ?? least, 1000) : least;
      return Array.from({ length: count }, () => skeleton(resolved.items ?? {}, build, depth + 1));
    }
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set(resolved.required ?? []);
      for (const [name, member] of Object.entries(resolved.properties ?? {})) {
        if (required.has(name) || holdsText(member, build.root, build.everyMember)) out[name] = skeleton(member, build, depth + 1);
      }
      // An open object (a free-form value, a record) gets one member of the suite's own.
      if (resolved.additionalProperties === undefined ? !resolved.properties : resolved.additionalProperties !== false)
        out.stall_extra = slotForAny(build, depth + 1);
      return out;
    }
    default:
      return slotForAny(build, depth);
  }
}

function slotForAny(build: Build, depth: number): AnySlot {
  const slot = new AnySlot(depth);
  build.anys.push(slot);
  return slot;
}

type Fill = { text: (slot: TextSlot) => string; any: (slot: AnySlot, first: boolean) => unknown };

function materialize(value: unknown, fill: Fill, seen = { any: false }): unknown {
  if (value instanceof TextSlot) return fill.text(value);
  if (value instanceof AnySlot) {
    const first = !seen.any;
    seen.any = true;
    return fill.any(value, first);
  }
  if (Array.isArray(value)) return value.map((item) => materialize(item, fill, seen));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, materialize(member, fill, seen)]));
  return value;
}

/** Shares a byte budget among the text slots, shortest caps first, so every slot is as long as it may be. */
function waterFill(slots: TextSlot[], budgetBytes: number, bytesPerChar: number): void {
  const sorted = [...slots].sort((a, b) => a.maxLength - b.maxLength);
  let left = Math.max(0, budgetBytes);
  sorted.forEach((slot, index) => {
    slot.length = Math.max(0, Math.min(slot.maxLength, Math.floor(left / (sorted.length - index) / bytesPerChar)));
    left -= slot.length * bytesPerChar;
  });
}

/** Bytes one character of the shape costs once encoded (JSON escapes NUL and lone surrogates to six). */
function costPerChar(shape: StallShape, encode: (text: string) => string): number {
  const sample = stallText(shape, 600);
  return Buffer.byteLength(encode(sample)) / sample.length;
}

interface Part {
  value: unknown;
  texts: TextSlot[];
  anys: AnySlot[];
}

function part(schema: JsonSchema | undefined, pick: number, wide: boolean, everyMember = false): Part | undefined {
  if (!schema) return undefined;
  const build: Build = { root: schema, pick, wide, everyMember, texts: [], anys: [] };
  return { value: skeleton(schema, build, 0), texts: build.texts, anys: build.anys };
}

/**
 * Fills a part with a shape inside a byte budget: members taking any JSON get text too, sharing
 * the budget with the text members; `size` measures the bare value as it travels.
 */
function fillWithShape(target: Part, shape: StallShape, budgetBytes: number, size: (value: unknown) => number, encode: (text: string) => string): unknown {
  const bare = size(materialize(target.value, { text: () => '', any: () => '' }));
  const anyTexts = new Map(target.anys.map((slot) => [slot, new TextSlot(Number.POSITIVE_INFINITY)]));
  waterFill([...target.texts, ...anyTexts.values()], budgetBytes - bare, costPerChar(shape, encode));
  return materialize(target.value, { text: (slot) => stallText(shape, slot.length), any: (slot) => stallText(shape, anyTexts.get(slot)!.length) });
}

/** Query values are text: objects and lists of the skeleton are flattened the way the fuzzer does. */
function queryOf(values: unknown): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries((values ?? {}) as Record<string, unknown>)) {
    for (const one of Array.isArray(value) ? value : [value])
      if (one !== undefined && one !== null) search.append(name, typeof one === 'object' ? JSON.stringify(one) : String(one));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/**
 * Members some routes need before their handler runs, which JSON Schema cannot say (a rule over
 * two members, a refinement): without them every payload is refused by validation. A payload's
 * own member of the same name wins.
 */
const HANDLER_RULES: Record<string, { members?: Record<string, unknown>; bodyBytes?: number }> = {
  // A key or key_from; the value is capped in bytes of JSON, which no schema keyword says.
  'blackboard.put': { members: { key: 'stall:suite' }, bodyBytes: blackboardLimits.valueMaxBytes },
  // A task or a request: the short task is filled only by the every-member payloads.
  'inference.route': { members: { task: 'find near-duplicate support tickets' } },
};

function withHandlerMembers(routeId: string, value: unknown): unknown {
  const members = HANDLER_RULES[routeId]?.members;
  return members && value && typeof value === 'object' && !Array.isArray(value) ? { ...members, ...value } : value;
}

const jsonEncode = (text: string) => JSON.stringify(text).slice(1, -1);
/** As URLSearchParams writes a form or a query (which escapes more than encodeURIComponent does). */
const urlEncode = (text: string) => new URLSearchParams({ v: text }).toString().slice(2);

/** URL budgets under the header cap: a request line is read with the headers. */
const PATH_PARAM_BYTES = 1024;
const QUERY_BYTES = 6000;
/** Room kept under the body cap for the framing a budget misses (rounding, separators). */
const BODY_SLACK_BYTES = 256;

/**
 * The generated payloads of one route for one round: each stall shape in every text member,
 * then deep JSON just under and over the cap. Rounds rotate which alternative of a union and
 * which array width each shape gets, so longer runs cover more of each schema.
 */
export function* generatedPayloads(target: FuzzTarget, round = 0): Generator<StallPayload> {
  const { route, schemas } = target;
  const credential = credentialFor(route);
  const encoding = route.bodyEncoding ?? 'json';
  const limit = Math.min(route.bodyLimitBytes ?? bodyRules.defaultLimitBytes, HANDLER_RULES[target.id]?.bodyBytes ?? Number.POSITIVE_INFINITY);
  let sent = 0;
  for (const [index, shape] of STALL_SHAPES.entries()) {
    const pick = index + round;
    const wide = (index + round) % 2 === 0;
    for (const everyMember of shape.short ? [false, true] : [false]) {
      const params = part(schemas.params, pick, wide, everyMember);
      const query = part(schemas.query, pick, wide, everyMember);
      const bodyPart = route.body && encoding !== 'bytes' ? part(schemas.body, pick, wide, everyMember) : undefined;
      const slots = [params, query, bodyPart].reduce((sum, one) => sum + (one ? one.texts.length + one.anys.length : 0), 0);
      // The every-member variant only when it adds members the other left out.
      if (
        everyMember &&
        slots ===
          [part(schemas.params, pick, wide), part(schemas.query, pick, wide), bodyPart && part(schemas.body, pick, wide)].reduce(
            (sum, one) => sum + (one ? one.texts.length + one.anys.length : 0),
            0,
          )
      )
        continue;
      const paramValues = params
        ? fillWithShape(params, shape, PATH_PARAM_BYTES, (value) => fillPath(route.path, value as Record<string, unknown>).length, urlEncode)
        : {};
      const queryValues = query ? fillWithShape(query, shape, QUERY_BYTES, (value) => queryOf(value).length, urlEncode) : {};
      const path = `${fillPath(route.path, paramValues as Record<string, unknown>)}${queryOf(queryValues)}`;
      let body: string | Uint8Array | undefined;
      let contentType: string | undefined;
      if (route.body && encoding === 'bytes') {
        body = new TextEncoder().encode(stallText(shape, limit - BODY_SLACK_BYTES)).subarray(0, limit - BODY_SLACK_BYTES);
        contentType = route.bodyMediaTypes?.[0] ?? 'application/octet-stream';
      } else if (bodyPart) {
        const size = (value: unknown) => Buffer.byteLength(encodeBody(route, withHandlerMembers(target.id, value)).body);
        ({ body, contentType } = encodeBody(
          route,
          withHandlerMembers(target.id, fillWithShape(bodyPart, shape, limit - BODY_SLACK_BYTES, size, encoding === 'form' ? urlEncode : jsonEncode)),
        ));
      }
      if (slots === 0 && body === undefined) continue;
      sent++;
      yield { kind: everyMember ? `${shape.name}, every member` : shape.name, method: route.method, path, body, contentType, credential };
    }
  }
  if (route.body && encoding === 'json') {
    for (const [kind, over] of [
      ['deep JSON under the cap', -1],
      ['deep JSON over the cap', 1],
    ] as const) {
      const bodyPart = part(schemas.body, round, true)!;
      const value = bodyPart.anys.length
        ? materialize(bodyPart.value, { text: () => 'x', any: (slot, first) => (first ? deepArray(Math.max(1, JSON_DEPTH_CAP - slot.depth + over)) : null) })
        : deepArray(JSON_DEPTH_CAP + over);
      sent++;
      yield {
        kind,
        method: route.method,
        path: fillPath(route.path, {}),
        body: JSON.stringify(withHandlerMembers(target.id, value)),
        contentType: 'application/json',
        credential,
      };
    }
  }
  // A route with nothing a caller controls is still sent once, so every route is measured.
  if (sent === 0) yield { kind: 'no caller input', method: route.method, path: fillPath(route.path, {}), credential };
}

// ---- the named inputs (issue 26), on their routes ----

const json = (value: unknown) => JSON.stringify(value);
const documentExtract = (kind: string, text: string, format: string): StallPayload => ({
  kind,
  method: 'POST',
  path: '/v1/document/extract',
  body: json({ text, format }),
  contentType: 'application/json',
  credential: 'developerKey',
});
const words = (word: string, chars: number) => `${word} `.repeat(Math.ceil(chars / (word.length + 1))).slice(0, chars);

/**
 * The stalls issue 26 measured, by route id: the worst known inputs, sent before the generated
 * ones. Built when their route's turn comes (the eval bodies are 4 MiB).
 */
const NAMED_PAYLOADS: Record<string, () => StallPayload[]> = {
  'jobs.submit': () => [
    {
      kind: 'validate_json ^(a+)+$ on 26 a then !',
      method: 'POST',
      path: '/v1/jobs',
      body: validateJson(`${'a'.repeat(26)}!`, 1),
      contentType: 'application/json',
      credential: 'operator',
    },
    {
      kind: 'validate_json ^(a+)+$ on 4096 a then !, 8 items',
      method: 'POST',
      path: '/v1/jobs',
      body: validateJson(`${'a'.repeat(4096)}!`, 8),
      contentType: 'application/json',
      credential: 'operator',
    },
  ],
  'documents.extract': () => [
    documentExtract('markdown # a + 1500 spaces', `# a${' '.repeat(1500)}x`, 'markdown'),
    documentExtract('markdown 60 KB of ![', '!['.repeat(30_000), 'markdown'),
    documentExtract('markdown 60 KB of **a', '**a '.repeat(15_000), 'markdown'),
    documentExtract('html 1 MB of unclosed <div>', '<div>'.repeat(200_000), 'html'),
  ],
  'inference.eval': () => [
    { kind: 'rouge_l on two 32 KiB items', method: 'POST', path: '/v1/eval', body: evalPairs(1), contentType: 'application/json', credential: 'developerKey' },
    { kind: 'rouge_l on a 4 MiB body', method: 'POST', path: '/v1/eval', body: evalPairs(60), contentType: 'application/json', credential: 'developerKey' },
  ],
  'discovery.a2a': a2aSkillPayloads,
  'blackboard.put': () => [
    {
      kind: 'value of a. x 65 KB, no credential',
      method: 'POST',
      path: '/api/v1/blackboard/put',
      body: json({ key: 'stall:suite', value: { text: 'stall', note: 'a.'.repeat(32_500) } }),
      contentType: 'application/json',
      credential: 'none',
    },
  ],
};

/**
 * A2A skills with a credential: each skill's REST input near its caps, inside the A2A body cap
 * (a2aLimits.bodyBytes), so the skill's route runs as it does over REST, with the A2A parse, the
 * in-process dispatch and the stored task on top.
 */
function a2aSkillPayloads(): StallPayload[] {
  const send = (kind: string, skill: string, parts: unknown[], method = 'message/send'): StallPayload => ({
    kind: `a2a ${kind}`,
    method: 'POST',
    path: '/a2a',
    body: json({ jsonrpc: '2.0', id: kind, method, params: { message: { messageId: `stall-${kind}`, role: 'user', parts, metadata: { skill } } } }),
    contentType: 'application/json',
    credential: 'developerKey',
  });
  const data = (value: Record<string, unknown>) => ({ kind: 'data', data: value });
  const sentences = (chars: number) => 'PostgreSQL keeps the state of every replica. '.repeat(Math.ceil(chars / 46)).slice(0, chars);
  return [
    send('rerank, 120 documents of 32 KiB', 'rerank', [
      data({ query: 'state replica', documents: Array.from({ length: 120 }, () => words('replica', 32_768)) }),
    ]),
    send('summarize, 400,000 characters, streamed', 'summarize', [{ kind: 'text', text: sentences(400_000) }], 'message/stream'),
    // RAG at its 1,000,000-character cap holds the loop over budget on REST itself (inference.rag): see docs/agents.md.
    send('rag, 200,000 characters in 5 documents', 'rag', [
      data({ question: 'Where is the state kept?', documents: Array.from({ length: 5 }, () => sentences(40_000)) }),
    ]),
    send('classify, 60 texts of 32 KiB', 'classify', [data({ task: 'sentiment', inputs: Array.from({ length: 60 }, () => words('good', 32_768)) })]),
  ];
}

export const namedPayloads = (routeId: string): StallPayload[] => NAMED_PAYLOADS[routeId]?.() ?? [];

function evalPairs(pairs: number): string {
  return json({
    references: Array.from({ length: pairs }, () => words('ref', 32_768)),
    predictions: Array.from({ length: pairs }, () => words('pred', 32_768)),
    metrics: ['rouge_l'],
  });
}

function validateJson(document: string, items: number): string {
  return json({
    schema: 'svc.batch-job-request.v1',
    operation: 'validate_json',
    items: Array.from({ length: items }, () => ({ schema: { type: 'string', pattern: '^(a+)+$' }, document })),
  });
}

/** The headers a route requires, each free one unique per request (an Idempotency-Key). */
export function requiredHeaders(route: RouteDefinition): Record<string, string> {
  if (!route.headers) return {};
  const schema = z.toJSONSchema(route.headers, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const resolved = resolve(schema, schema);
  const headers: Record<string, string> = {};
  for (const name of resolved.required ?? []) {
    const member = resolve(resolved.properties?.[name], schema);
    // A UUID fits the usual header patterns (printable ASCII) and never repeats.
    const textual = member.type === 'string' && member.enum === undefined && member.const === undefined;
    headers[name] = textual ? randomUUID() : String(fixedValue(member, schema));
  }
  return headers;
}

/** Every payload of one route and round, built as it is sent (some are tens of MiB): the named ones first. */
export function* stallPayloads(target: FuzzTarget, round = 0): Generator<StallPayload> {
  const withHeaders = (payload: StallPayload): StallPayload => ({ ...payload, headers: { ...requiredHeaders(target.route), ...payload.headers } });
  if (round === 0) for (const payload of namedPayloads(target.id)) yield withHeaders(payload);
  for (const payload of generatedPayloads(target, round)) yield withHeaders(payload);
}

/**
 * The worst known payloads (issue 26's named inputs), for load that mixes them in (bench/soak):
 * `headers()` gives each send its own required headers, so a job is submitted anew, not replayed.
 */
export function worstPayloads(): Array<{ routeId: string; surface: RouteDefinition['surface']; payload: StallPayload; headers: () => Record<string, string> }> {
  const routes = new Map(walkContract(contract).map(({ id, route }) => [id, route]));
  return Object.keys(NAMED_PAYLOADS).flatMap((routeId) => {
    const route = routes.get(routeId)!;
    return namedPayloads(routeId).map((payload) => ({
      routeId,
      surface: route.surface,
      payload,
      headers: () => ({ ...requiredHeaders(route), ...payload.headers }),
    }));
  });
}
