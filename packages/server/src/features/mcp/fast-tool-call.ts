import type { IncomingHttpHeaders } from 'node:http';
import { classifyInboundRequest, isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { AgentTool } from '@svc/schemas';
import { MODERN_MCP_REVISION } from '../blackboard/index.ts';
import { STRUCTURED_TEXT, type ToolCatalogue, type ToolResult } from './tool-calls.ts';

/**
 * The fast path of `/mcp`: a plain `tools/call` (one request, no progress token, so its answer is
 * one `application/json` body) is answered by svc's code instead of the MCP SDK's handler, whose
 * web `Request`, `Response`, per-request `Server` and transport cost more than the REST call
 * itself (bench:mcp). Everything else goes through the SDK: initialize, tools/list, resources,
 * notifications, progress, batches, and any request that fails one of the checks the SDK applies.
 *
 * plainToolCall decides, applying every check the SDK applies to such a request, and returns
 * undefined when any one fails, so that the SDK answers the refusal in its own words:
 * - the body is one JSON-RPC request: `jsonrpc: "2.0"`, an id that is a string or an integer,
 *   method `tools/call`, params an object with a string `name` and nothing the SDK would read
 *   beyond `name`, `arguments` and `_meta` (no `task`);
 * - Content-Type is JSON;
 * - the era, as the SDK's own classifier (classifyInboundRequest) gives it:
 *   - 2026-07-28: the `_meta` envelope is valid and names 2026-07-28, the MCP-Protocol-Version
 *     header is present and names it too, Mcp-Method is `tools/call`, Mcp-Name is the tool's name
 *     (plain, not the Base64 sentinel);
 *   - 2025-11-25 (no envelope claim): Accept lists both `application/json` and
 *     `text/event-stream`, and the MCP-Protocol-Version header is absent or a 2025-era revision;
 * - no `progressToken` (notifications need an event stream);
 * - the tool exists (an unknown tool is the SDK's -32602).
 * What is checked before either path runs, as the REST adapter and the endpoint do for both: the
 * credential (401 with `resource_metadata`, 403 `insufficient_scope`), the resource a token is
 * bound to, an unsupported revision and arguments that are not an object (precheckMcpRequest).
 * A route's refusal of the arguments (422) is the tool's `isError` result on both paths.
 */
export interface PlainToolCall {
  /** 2026-07-28 (the per-request envelope) or 2025-11-25. */
  readonly modern: boolean;
  readonly id: string | number;
  readonly tool: AgentTool;
  readonly args: Record<string, unknown>;
}

const PARAM_KEYS = new Set(['name', 'arguments', '_meta']);
const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';
const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';
const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function onlyKeys(value: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

export function plainToolCall(body: unknown, headers: IncomingHttpHeaders, catalogue: ToolCatalogue): PlainToolCall | undefined {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call' || !onlyKeys(body, REQUEST_KEYS)) return undefined;
  const { id, params } = body;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined;
  if (!isPlainObject(params) || typeof params.name !== 'string' || !onlyKeys(params, PARAM_KEYS)) return undefined;
  const args = params.arguments ?? {};
  if (!isPlainObject(args)) return undefined;
  const meta = params._meta;
  if (meta !== undefined && (!isPlainObject(meta) || meta.progressToken !== undefined)) return undefined;
  if (!isJsonContentType(headerOf(headers, 'content-type') ?? null)) return undefined;
  const protocolVersionHeader = headerOf(headers, 'mcp-protocol-version');
  const mcpMethodHeader = headerOf(headers, 'mcp-method');
  const mcpNameHeader = headerOf(headers, 'mcp-name');
  const modern = meta !== undefined && PROTOCOL_VERSION_META_KEY in meta;
  if (modern) {
    // 2026-07-28: the SDK's classifier validates the envelope and the header cross-checks; its
    // standard-header rung wants all three headers, Mcp-Name plainly equal to the name.
    if (protocolVersionHeader !== MODERN_MCP_REVISION || mcpMethodHeader !== 'tools/call' || mcpNameHeader !== params.name) return undefined;
    if (!modernEnvelopeAccepted(body, meta as Record<string, unknown>)) return undefined;
  } else {
    // 2025-11-25, served by the SDK's stateless transport: its Accept and protocol-version checks.
    const accept = headerOf(headers, 'accept');
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
    if (protocolVersionHeader !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersionHeader)) return undefined;
  }
  const tool = catalogue.find(params.name);
  if (!tool) return undefined;
  return { modern, id, tool, args };
}

/**
 * The SDK classifier's verdicts on the envelopes seen, by the envelope's JSON text: with the
 * request's shape, method and headers already checked above (and the headers fixed to the
 * revision, the method and the name), the verdict depends on the `_meta` envelope alone, and
 * clients send the same few envelopes again and again, while the classifier's Zod checks cost
 * several µs per request. Bounded: short envelopes only, and the map is emptied when full.
 */
const envelopeVerdicts = new Map<string, boolean>();
const ENVELOPE_VERDICTS_MAX = 256;
const ENVELOPE_TEXT_MAX = 2048;

/**
 * The key of the envelope nearly every client sends, built without encoding it: exactly the
 * protocol version, empty client capabilities and a client info of a name and a version, which
 * those three strings determine whole. Undefined for any other envelope (its JSON text is the key).
 */
function commonEnvelopeKey(meta: Record<string, unknown>): string | undefined {
  let keys = 0;
  for (const _ in meta) keys++;
  const version = meta[PROTOCOL_VERSION_META_KEY];
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY];
  const info = meta[CLIENT_INFO_META_KEY];
  if (keys !== 3 || typeof version !== 'string' || !isPlainObject(capabilities) || !isPlainObject(info)) return undefined;
  for (const _ in capabilities) return undefined;
  let infoKeys = 0;
  for (const _ in info) infoKeys++;
  const { name, version: clientVersion } = info;
  if (infoKeys !== 2 || typeof name !== 'string' || typeof clientVersion !== 'string') return undefined;
  // NUL separates the three (and opens the key, apart from JSON texts, which open with `{`).
  if (version.includes('\u0000') || name.includes('\u0000') || clientVersion.includes('\u0000')) return undefined;
  return `\u0000${version}\u0000${name}\u0000${clientVersion}`;
}

function modernEnvelopeAccepted(body: Record<string, unknown>, meta: Record<string, unknown>): boolean {
  const classify = () => {
    const params = body.params as { name: string };
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: MODERN_MCP_REVISION,
      mcpMethodHeader: 'tools/call',
      mcpNameHeader: params.name,
      body,
    });
    return outcome.kind === 'modern' && outcome.messageKind === 'request' && outcome.classification.revision === MODERN_MCP_REVISION;
  };
  const key = commonEnvelopeKey(meta) ?? JSON.stringify(meta);
  if (key.length > ENVELOPE_TEXT_MAX) return classify();
  let verdict = envelopeVerdicts.get(key);
  if (verdict === undefined) {
    verdict = classify();
    if (envelopeVerdicts.size >= ENVELOPE_VERDICTS_MAX) envelopeVerdicts.clear();
    envelopeVerdicts.set(key, verdict);
  }
  return verdict;
}

// With its charset, as Koa would write it: Koa's type setter then skips its MIME lookup.
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

let answeredHere = 0;
/** How many tool calls this process answered on the fast path (the test comparing both paths checks which took it). */
export function plainToolCallsAnswered(): number {
  return answeredHere;
}

/** Who answers, as the SDK's `Server` stamps it into a 2026-07-28 result (`_meta`). */
export interface ServerInfo {
  readonly name: string;
  readonly title?: string;
  readonly version: string;
}

/**
 * The SDK's answer to a plain tool call, written by svc: 200 with the JSON-RPC response as
 * `application/json`, its result encoded as the SDK's codec of the revision encodes it (2026-07-28:
 * `resultType: "complete"` and the server's identity in `_meta`; 2025-11-25: the result as is). A
 * call that throws is the SDK's -32603 error with the error's message (an error carrying a
 * safe-integer `code` keeps it, as the SDK's protocol layer does).
 */
export async function answerPlainToolCall(
  call: PlainToolCall,
  serverInfo: ServerInfo,
  run: (tool: AgentTool, args: Record<string, unknown>, id: string | number) => Promise<ToolResult>,
): Promise<{ status: 200; headers: Record<string, string>; body: string }> {
  answeredHere++;
  let message: string;
  try {
    const result = await run(call.tool, call.args, call.id);
    message =
      encodedWhole(result, call, serverInfo) ??
      JSON.stringify({ result: call.modern ? encodeModern(result, serverInfo) : result, jsonrpc: '2.0', id: call.id });
  } catch (error) {
    const { code, message: text, data } = error as { code?: unknown; message?: unknown; data?: unknown };
    message = JSON.stringify({
      jsonrpc: '2.0',
      id: call.id,
      error: {
        code: Number.isSafeInteger(code) ? code : -32603,
        message: typeof text === 'string' ? text : 'Internal error',
        ...(data !== undefined ? { data } : {}),
      },
    });
  }
  return { status: 200, headers: { ...JSON_HEADERS }, body: message };
}

const serverInfoTexts = new WeakMap<ServerInfo, string>();

/**
 * The JSON-RPC answer written around the REST answer's own JSON text (toolResultOf's
 * STRUCTURED_TEXT), with the keys in the order the SDK writes them: what JSON.stringify of the
 * SDK's message gives, without decoding the REST answer and encoding it again.
 */
function encodedWhole(result: ToolResult, call: PlainToolCall, serverInfo: ServerInfo): string | undefined {
  const structured = (result as { [STRUCTURED_TEXT]?: string })[STRUCTURED_TEXT];
  if (structured === undefined) return undefined;
  let tail = result.isError ? ',"isError":true' : '';
  if (call.modern) {
    let info = serverInfoTexts.get(serverInfo);
    if (info === undefined) serverInfoTexts.set(serverInfo, (info = JSON.stringify(serverInfo)));
    tail += `,"resultType":"complete","_meta":{"${SERVER_INFO_META_KEY}":${info}}`;
  }
  return `{"result":{"content":[{"type":"text","text":${JSON.stringify(result.content[0]!.text)}}],"structuredContent":${structured}${tail}},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}`;
}

/** The 2026-07-28 codec's encoding of a tools/call result (stampResultType, then stampServerInfoMeta). */
function encodeModern(result: ToolResult, serverInfo: ServerInfo): Record<string, unknown> {
  const stamped: Record<string, unknown> = result.resultType === undefined ? { ...result, resultType: 'complete' } : result;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}
