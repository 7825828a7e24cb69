import { agentTools, contract, currentToolName, mcpToolListing, principalMayCall, type AgentTool, type McpListedTool, type Principal } from '@svc/schemas';
import { hasMembers, type DispatchAnswer, type DispatchCaller, type DispatchInput, type ContractDispatch } from '../../http/dispatch.ts';
import { followProgress, type ReportProgress } from './progress.ts';
import { TASK_TOOLS } from './task-tools.ts';

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** What a ToolCatalogue works out once: the tools, by name, and their `tools/list` entries. */
interface Catalogue {
  tools: readonly AgentTool[];
  byName: ReadonlyMap<string, AgentTool>;
  listed: ReadonlyMap<AgentTool, McpListedTool>;
  /** The same, with `execution.taskSupport` on the tools that run as tasks (where tasks are served). */
  listedWithTasks: ReadonlyMap<AgentTool, McpListedTool & { execution?: { taskSupport: 'optional' } }>;
  /** The prose several tools share, said once as the server's `instructions` (mcpToolListing). */
  instructions: string;
}

/**
 * The contract's agent-callable operations, worked out once, on first use: their `tools/list`
 * entries and, by name, how a call's arguments become the REST request. Not at start: rendering
 * every tool's JSON Schemas is about a quarter of a second of CPU, which a starting server
 * (issue 42's cold start) would spend before its first answer while no MCP call or discovery
 * card needs it yet.
 */
export class ToolCatalogue {
  #catalogue: Catalogue | undefined;

  get #built(): Catalogue {
    if (this.#catalogue) return this.#catalogue;
    const tools = agentTools(contract);
    // Compact, without losing a constraint: hosts put the whole list into the model's context.
    const { listed, instructions } = mcpToolListing(tools);
    this.#catalogue = {
      tools,
      byName: new Map(tools.map((tool) => [tool.name, tool])),
      listed,
      listedWithTasks: new Map(
        [...listed].map(([tool, entry]) => [tool, TASK_TOOLS.has(tool.name) ? { ...entry, execution: { taskSupport: 'optional' as const } } : entry]),
      ),
      instructions,
    };
    return this.#catalogue;
  }

  get tools(): readonly AgentTool[] {
    return this.#built.tools;
  }

  /** The prose several tools share, said once as the server's `instructions` (mcpToolListing). */
  get instructions(): string {
    return this.#built.instructions;
  }

  /** The tool of a name, or of a former name (`credentials_create`: @svc/schemas' former-names.ts), which `tools/list` never shows. */
  find(name: string): AgentTool | undefined {
    const { byName } = this.#built;
    return byName.get(name) ?? byName.get(currentToolName(name));
  }

  /**
   * What `tools/list` shows: to a caller without a credential every tool (calling one that needs a
   * credential is how the client learns to start OAuth); to a caller with one, only what it may call.
   */
  listFor(principal: Principal, { tasks = false } = {}): McpListedTool[] {
    const built = this.#built;
    const visible = principal.kind === 'anonymous' ? built.tools : built.tools.filter((tool) => principalMayCall(tool.route, principal));
    const listed = tasks ? built.listedWithTasks : built.listed;
    return visible.map((tool) => listed.get(tool)!);
  }
}

/**
 * Splits a tool call's arguments into the REST request's parts, as the tool's input schema placed
 * them. `bytesAtMost` is the length of the JSON text the arguments came in (DispatchInput.bodyBytesAtMost).
 */
export function requestOf(tool: AgentTool, args: Record<string, unknown>, bytesAtMost?: number): { input: DispatchInput; headers: Record<string, string> } {
  const params: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  let body: Record<string, unknown> | undefined = tool.route.body && !tool.bodyWhole ? {} : undefined;
  let wholeBody: unknown;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(args)) {
    const part = tool.placement[name];
    // An argument the tool does not take goes into the body (or the query) so the route's own validation names it.
    if (part === 'params') params[name] = value;
    else if (part === 'query' || (!part && !tool.route.body)) query[name] = value;
    else if (part === 'header') headers['idempotency-key'] = String(value);
    else if (tool.bodyWhole && name === 'body') wholeBody = value;
    // As JSON.parse makes a REST body's `__proto__` member: an own property, not the object's prototype.
    else if (name === '__proto__') Object.defineProperty((body ??= {}), name, { value, enumerable: true, writable: true, configurable: true });
    else (body ??= {})[name] = value;
  }
  // The arguments are part of the /mcp request's body, which the body reader decoded and checked.
  return { input: { params, query, body: tool.bodyWhole ? wholeBody : body, bodyChecked: true, bodyBytesAtMost: bytesAtMost }, headers };
}

/** A path parameter the call did not give: the REST route would not even match, so it is said here, the way the route words a missing field. */
function missingPathParams(tool: AgentTool, args: Record<string, unknown>): string[] {
  const missing: string[] = [];
  for (const name in tool.placement) {
    if (tool.placement[name] !== 'params') continue;
    const value = args[name];
    if (value === undefined || value === null || value === '') missing.push(name);
  }
  return missing;
}

/** An argument the tool does not take; none, the common case, allocates nothing. */
function unknownArguments(tool: AgentTool, args: Record<string, unknown>): string[] {
  let unknown: string[] | undefined;
  for (const name in args) if (!tool.placement[name]) (unknown ??= []).push(name);
  return unknown ?? [];
}

/**
 * The JSON text of a tool result's `structuredContent`, when it is the REST answer's text as it
 * came (compact JSON of an object): the fast path (fast-tool-call.ts) writes it into the MCP
 * answer without decoding and encoding it again.
 */
export const STRUCTURED_TEXT = Symbol('structuredContent as JSON text');

/**
 * The REST answer as a tool result: the same JSON as `structuredContent` and as text; an error
 * status is `isError`. With `raw` (the fast path, fast-tool-call.ts), a JSON object answer keeps
 * its text as STRUCTURED_TEXT instead of a decoded `structuredContent`.
 */
export function toolResultOf(answer: DispatchAnswer, raw = false): ToolResult {
  const isError = answer.status >= 400;
  const { text } = answer;
  const content = [{ type: 'text' as const, text }];
  // A JSON answer whose text opens with `{` is an object.
  if (raw && text.charCodeAt(0) === 123 && String(answer.headers['content-type'] ?? '').includes('json'))
    return isError ? { content, isError: true, [STRUCTURED_TEXT]: text } : { content, [STRUCTURED_TEXT]: text };
  const json = answer.json;
  const structured = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  return {
    content,
    ...(structured ? { structuredContent: structured } : {}),
    ...(isError ? { isError: true } : {}),
  };
}

/** How a tool call is run (callTool). */
export interface ToolCallOptions {
  /** The client gave a progressToken: a route that declares how it reports progress (`agent.progress`) is followed step by step. */
  readonly report?: ReportProgress | undefined;
  /** The fast path (fast-tool-call.ts): a JSON object answer keeps its text (toolResultOf). */
  readonly raw?: boolean;
  /** The byte length of the MCP request's body, which holds the arguments' JSON text (DispatchInput.bodyBytesAtMost). */
  readonly argumentsBytesAtMost?: number | undefined;
}

/** Runs one tool call through its REST route, as the caller; with a progress report, the answer is still the route's JSON. */
export async function callTool(
  dispatch: ContractDispatch,
  tool: AgentTool,
  args: Record<string, unknown>,
  caller: DispatchCaller,
  { report, raw = false, argumentsBytesAtMost }: ToolCallOptions = {},
): Promise<ToolResult> {
  // What the REST route could not be asked: a path parameter missing (no route would match), or an
  // argument the tool does not take (a route without a query schema ignores unknown parameters,
  // while the tool's schema refuses them). Said in the REST validation error's shape.
  const missing = missingPathParams(tool, args).map((name) => ({ loc: ['path', name], msg: 'Required', type: 'missing' }));
  const unknown = unknownArguments(tool, args).map((name) => ({ loc: ['arguments', name], msg: `Unrecognized argument: ${name}`, type: 'unrecognized_keys' }));
  const refused = [...missing, ...unknown];
  if (refused.length > 0) {
    const body = {
      error: `Invalid request: ${refused.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`).join('; ')}`,
      code: 'validation_failed',
      detail: refused,
    };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  }
  const { input, headers } = requestOf(tool, args, argumentsBytesAtMost);
  // Most calls carry no header of their own (only an Idempotency-Key argument is one).
  const withHeaders = hasMembers(headers) ? { ...caller, headers: { ...caller.headers, ...headers } } : caller;
  const progress = tool.route.agent?.progress;
  if (report && progress) return toolResultOf(await followProgress(dispatch, tool.route, progress, input, withHeaders, report));
  return toolResultOf(await dispatch.call(tool.route, input, withHeaders), raw);
}
