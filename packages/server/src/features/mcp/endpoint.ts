import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { mcpContract, oauthContract, principalMayCall, SVC_VERSION, urlFor, type AgentTool, type Principal } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import type { Tasks } from '../tasks/index.ts';
import { openAccessPrincipal, principalToCarry } from '../../http/auth.ts';
import { abortRequest } from '../../http/mount-contract.ts';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import { batchGateFor, precheckMcpRequest, type McpBatchGate } from '../blackboard/index.ts';
import { acceptsResource } from '../identity/index.ts';
import { readResource, resourceTemplates } from './resources.ts';
import { InFlightCalls } from './in-flight.ts';
import { answerPlainToolCall, plainToolCall } from './fast-tool-call.ts';
import type { ReportProgress } from './progress.ts';
import { answerExtensionTaskMessage, isExtensionTaskMessage, TASKS_EXTENSION_ID, TASKS_EXTENSION_REVISION } from './tasks-extension.ts';
import { answerTaskMessage, isTaskMessage, mcpCallerOf, McpTasks, TASKS_CAPABILITY, TASKS_REVISION } from './tasks.ts';
import { streamTaskResult } from './task-result-stream.ts';
import { callTool, ToolCatalogue, type ToolResult } from './tool-calls.ts';

export const MCP_BASE_SERVER_NAME = 'svc';
export const MCP_BASE_SERVER_TITLE = 'svc: every agent operation of the API';
const SERVER_INFO = { name: MCP_BASE_SERVER_NAME, title: MCP_BASE_SERVER_TITLE, version: SVC_VERSION } as const;

/**
 * How long a client may reuse `tools/list` (2026-07-28): the list depends on the credential, so only
 * the caller's own cache may keep it; it changes only with a deploy.
 */
const TOOL_LIST_CACHE_HINT = { ttlMs: 300_000, cacheScope: 'private' } as const;

/** Who is calling, as the REST adapter resolved them for the /mcp route. */
interface Caller {
  readonly request: RequestContext;
  /** The principal the tools are listed for (open access counts as the open principal). */
  readonly principal: Principal;
  /** A batch's gate: its calls run one at a time, within its answer budget (McpBatchGate). */
  readonly batch?: McpBatchGate | undefined;
}

type JsonRpcMessage = { method?: unknown; params?: { name?: unknown } };

/** Headers of the SDK's answer that mean something to the client; length and framing are Koa's. */
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'mcp-protocol-version', 'www-authenticate', 'allow', 'cache-control'];
const STATUSES_WITH_BODY = [200, 400, 404, 405, 406, 413, 415, 500] as const;
type StatusWithBody = (typeof STATUSES_WITH_BODY)[number];

async function toContractAnswer(response: Response) {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_RESPONSE_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if (response.status === 202) return { status: 202 as const, headers };
  const status = ((STATUSES_WITH_BODY as readonly number[]).includes(response.status) ? response.status : 500) as StatusWithBody;
  // An event stream (progress notifications, then the result) is passed on as it arrives; a JSON
  // answer is read whole, which costs less than piping a web stream through a Node one.
  if (response.body && headers['content-type']?.startsWith('text/event-stream'))
    return { status, headers, body: Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>) };
  return { status, headers, body: new Uint8Array(await response.arrayBuffer()) };
}

/**
 * The base-surface MCP endpoint (`POST /mcp`): a low-level SDK `Server` whose `tools/list` is the
 * contract's agent-callable operations (worked out once, ToolCatalogue) and whose `tools/call` runs
 * the operation's REST route through the REST app itself (deps.dispatch), as the caller. No tool has
 * code of its own; the SDK validates nothing of a tool's arguments, so a bad argument gets the
 * route's own 422 body. Eras as on /api/mcp: 2026-07-28 through `createMcpHandler`, 2025-era
 * traffic through a stateless 2025-11-25 transport.
 */
/** What the endpoint reaches for: the REST routes it runs tools through, and its in-flight table. */
export type McpEndpointDeps = Pick<ServerDeps, 'config' | 'database' | 'dispatch' | 'log' | 'publicUrls' | 'scheduler' | 'testSeams'>;

export function createBaseMcpEndpoint(deps: McpEndpointDeps, given: { tasks: Tasks }) {
  const catalogue = new ToolCatalogue();
  // Task-augmented calls, on the durable task store: this process runs them too (tasks.ts).
  const mcpTasks = new McpTasks({ tasks: given.tasks, dispatch: deps.dispatch, catalogue, maxActive: deps.config.mcp.tasksMaxActive });
  mcpTasks.register();
  // Diagnostic: SVC_MCP_SDK_ONLY=1 (read once, at start) or the test seam sends plain tool calls
  // through the SDK's handler too (fast-tool-call.ts): the test comparing both paths' answers and
  // bench:mcp's A/B use it.
  const sdkOnly = deps.testSeams?.mcpSdkOnly ?? process.env.SVC_MCP_SDK_ONLY === '1';
  const callers = new WeakMap<Request, Caller>();
  // A cancellation received here for a call running on another replica reaches it through the
  // database: each replica polls for its calls while it has some in flight (none when idle).
  const inFlight = new InFlightCalls(deps.database.sequelize, (error) =>
    deps.log.warn({ err: error, task: 'mcp.cancelled-calls.poll' }, 'polling for cancelled tool calls failed; it polls again in 500 ms'),
  );
  deps.scheduler.every('mcp.cancelled-calls.prune', 10 * 60_000, () => inFlight.prune());

  /**
   * One tool call, as the SDK's handler and the fast path (fast-tool-call.ts) run it. Cancelling
   * the call (notifications/cancelled, which a stateless client sends as a request of its own,
   * received here or by another replica) or leaving (a closed connection) aborts the route's work
   * as a REST disconnect does.
   */
  const runToolCall = async (
    caller: Caller,
    tool: AgentTool,
    args: Record<string, unknown>,
    id: string | number,
    sdkSignal: AbortSignal | undefined,
    report?: ReportProgress,
  ): Promise<ToolResult> => {
    const { request } = caller;
    const authorization = typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
    let signal: AbortSignal;
    let done: () => void;
    if (sdkSignal) {
      // The SDK's path (progress, batches): a call of a batch is cancelled alone, so it has a
      // controller of its own, and follows the SDK's signal and the request's too.
      const controller = new AbortController();
      done = inFlight.start(callerKey(caller), id, (reason) => controller.abort(reason));
      signal = AbortSignal.any([sdkSignal, request.signal, controller.signal]);
    } else {
      // The fast path: one call per request, so cancelling the call aborts its request, whose
      // signal the route's work follows already (abortRequest; no second signal per call).
      done = inFlight.start(callerKey(caller), id, (reason) => abortRequest(request, reason));
      signal = request.signal;
    }
    try {
      // The fast path (no SDK signal) writes the REST answer's JSON text as it came.
      return await callTool(
        deps.dispatch,
        tool,
        args,
        { authorization, principal: principalToCarry(request), ip: request.ip, signal },
        { report, raw: sdkSignal === undefined, argumentsBytesAtMost: declaredLength(request) },
      );
    } finally {
      done();
    }
  };

  /** `legacy`: a 2025-era request, where the 2025-11-25 core task methods are served (tasks.ts). */
  const buildServer = (caller: Caller, legacy = false): Server => {
    const server = new Server(
      { ...SERVER_INFO },
      {
        // Tasks: the 2025-11-25 core methods for a 2025-era client, the 2026-07-28 extension for the others.
        capabilities: {
          tools: { listChanged: false },
          resources: {},
          ...(legacy ? { tasks: TASKS_CAPABILITY } : { extensions: { [TASKS_EXTENSION_ID]: {} } }),
        },
        instructions: catalogue.instructions,
        cacheHints: { 'tools/list': TOOL_LIST_CACHE_HINT, 'resources/templates/list': TOOL_LIST_CACHE_HINT },
      },
    );
    const { request, batch } = caller;
    const authorization = typeof request.headers.authorization === 'string' ? request.headers.authorization : undefined;
    // Every answer of a batch passes its gate; a single message's needs none.
    const gated = <T>(work: () => T | Promise<T>): T | Promise<T> => (batch ? batch.run(work) : work());
    server.setRequestHandler('tools/list', () => gated(() => ({ tools: catalogue.listFor(caller.principal, { tasks: legacy }) })));
    server.setRequestHandler('tools/call', async (call, ctx) => {
      const tool = catalogue.find(call.params.name);
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${call.params.name}. tools/list names every tool.`);
      const progressToken = ctx.mcpReq._meta?.progressToken;
      const report =
        progressToken === undefined
          ? undefined
          : (update: { progress: number; total?: number; message?: string }) =>
              ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, ...update } });
      return await gated(() => runToolCall(caller, tool, call.params.arguments ?? {}, ctx.mcpReq.id, ctx.mcpReq.signal, report));
    });
    server.setRequestHandler('resources/templates/list', () => gated(() => ({ resourceTemplates })));
    server.setRequestHandler('resources/list', () => gated(() => ({ resources: [] })));
    server.setRequestHandler('resources/read', (read, ctx) =>
      gated(() =>
        readResource(deps.dispatch, read.params.uri, {
          authorization,
          principal: principalToCarry(request),
          ip: request.ip,
          signal: AbortSignal.any([ctx.mcpReq.signal, request.signal]),
        }),
      ),
    );
    return server;
  };

  const modern: McpHttpHandler = createMcpHandler(
    ({ requestInfo }) => {
      const caller = requestInfo && callers.get(requestInfo);
      if (!caller) throw new Error('MCP request without its svc request context');
      return buildServer(caller);
    },
    { legacy: 'reject' },
  );

  /** 2025-era: JSON answers, or an event stream when the client asked for progress (notifications need one). */
  async function serveLegacy(server: Server, request: Request, parsedBody: unknown): Promise<Response> {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !asksForProgress(parsedBody) });
    await server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody });
    if (response.body === null || !response.headers.get('content-type')?.includes('text/event-stream')) {
      // Read the answer before closing: closing the transport ends its pending streams.
      const body = response.body === null ? null : await response.arrayBuffer();
      await transport.close().catch(() => {});
      await server.close().catch(() => {});
      return new Response(body, { status: response.status, headers: response.headers });
    }
    return response;
  }

  // The two URLs every request needs, worked out again only when the public URLs change.
  let known: { baseUrl: string; apiUrl: string; endpoint: string; metadata: string } | undefined;
  const urlsNow = () => {
    const urls = deps.publicUrls();
    if (known?.baseUrl !== urls.baseUrl || known.apiUrl !== urls.apiUrl)
      known = { ...urls, endpoint: urlFor(urls, mcpContract.endpoint), metadata: urlFor(urls, oauthContract.protectedResourceMcp) };
    return known;
  };

  return async function handleBaseMcpRequest(body: unknown, request: RequestContext) {
    const urls = urlsNow();
    const challenge = (extra = '') => ({
      'www-authenticate': `Bearer realm="svc", resource_metadata="${urls.metadata}"${extra}`,
    });
    const presented = request.headers.authorization !== undefined;
    if (presented && request.principal.kind === 'anonymous')
      throw new ServiceError('invalid_token', 'The bearer token is not valid.', { headers: challenge(', error="invalid_token"') });
    // RFC 8707: a token bound to another resource (the REST API, /api/mcp) is not good here.
    if (!acceptsResource(request.principal, urls.endpoint))
      throw new ServiceError('invalid_token', 'The token was issued for another resource than this MCP endpoint.', {
        headers: challenge(', error="invalid_token"'),
      });
    const principal = request.principal.kind === 'anonymous' && deps.config.openAccess ? openAccessPrincipal : request.principal;
    // The revision and a batch's bounds first: a refused request has done nothing (no cancellation recorded).
    const versionHeader = request.headers['mcp-protocol-version'];
    const refused = precheckMcpRequest(body, typeof versionHeader === 'string' ? versionHeader : undefined);
    if (refused) return await toContractAnswer(Response.json(refused.body, { status: refused.status }));
    refuseUnauthorisedCalls(body, principal, catalogue, challenge);
    const caller: Caller = { request, principal, batch: batchGateFor(body, deps.testSeams?.mcpBatchTimeBudgetMs) };
    const cancelled = cancelledIds(body);
    if (cancelled.length > 0) {
      await inFlight
        .cancel(callerKey(caller), cancelled)
        .catch((error: unknown) => request.log.error({ err: error }, 'recording an MCP cancellation for another replica failed'));
    }

    // 2025-11-25 core tasks: a task-augmented tools/call and the tasks/* methods, on the durable task store (tasks.ts).
    if (versionHeader === TASKS_REVISION && isTaskMessage(body)) {
      const taskCaller = mcpCallerOf(principal, principalToCarry(request), request.ip);
      const streamed = await streamTaskResult(mcpTasks, taskCaller, body, request);
      if (streamed) return await toContractAnswer(streamed);
      return await toContractAnswer(Response.json(await answerTaskMessage(mcpTasks, taskCaller, body, request.signal)));
    }
    // 2026-07-28: the Tasks extension, on the same tasks (tasks-extension.ts).
    if (versionHeader === TASKS_EXTENSION_REVISION && isExtensionTaskMessage(body)) {
      const taskCaller = mcpCallerOf(principal, principalToCarry(request), request.ip);
      return await toContractAnswer(Response.json(await answerExtensionTaskMessage(mcpTasks, taskCaller, body)));
    }
    if (!sdkOnly) {
      const plain = plainToolCall(body, request.headers, catalogue);
      if (plain) return await answerPlainToolCall(plain, SERVER_INFO, (tool, args, id) => runToolCall(caller, tool, args, id, undefined));
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const webRequest = new Request(urls.endpoint, { method: 'POST', headers, signal: request.signal });
    callers.set(webRequest, caller);
    const response = (await isLegacyRequest(webRequest, body))
      ? await serveLegacy(buildServer(caller, true), webRequest, body)
      : await modern.fetch(webRequest, { parsedBody: body });
    return await toContractAnswer(response);
  };
}

/** The /mcp request's declared body length (it holds a tool call's arguments); undefined when chunked. */
function declaredLength(request: RequestContext): number | undefined {
  const header = request.headers['content-length'];
  const length = typeof header === 'string' ? Number(header) : Number.NaN;
  return Number.isSafeInteger(length) && length >= 0 ? length : undefined;
}

/** Principals many callers share (a publishable token, or none): a call of theirs is the address's. */
const SHARED_PRINCIPALS: ReadonlySet<Principal['kind']> = new Set(['demo', 'open', 'anonymous']);

/**
 * Who may cancel a call: the credential that made it, not the agent it belongs to (an agent's
 * `models:read` key may not stop a call made with its `inference:invoke` key). A developer key is
 * its id (the same key after a rotation); any other bearer is its hash (never the secret, which
 * the database's cancellation rows would otherwise hold). A shared principal is many callers, so
 * its calls are also the address's, as before.
 */
function callerKey(caller: Caller): string {
  const { principal, request } = caller;
  const authorization = typeof request.headers.authorization === 'string' ? request.headers.authorization : '';
  const credential = principal.developerKeyId ? `key:${principal.developerKeyId}` : `bearer:${createHash('sha256').update(authorization).digest('base64url')}`;
  const key = `${principal.kind}:${principal.id}:${credential}`;
  return SHARED_PRINCIPALS.has(principal.kind) ? `${key}:${request.ip}` : key;
}

/** The ids a request's `notifications/cancelled` messages name (at most a batch's cap of them). */
function cancelledIds(body: unknown): unknown[] {
  const ids: unknown[] = [];
  for (const message of (Array.isArray(body) ? body : [body]) as Array<{ method?: unknown; params?: { requestId?: unknown } } | undefined>)
    if (message?.method === 'notifications/cancelled') ids.push(message.params?.requestId);
  return ids;
}

function asksForProgress(body: unknown): boolean {
  const messages = (Array.isArray(body) ? body : [body]) as Array<{ params?: { _meta?: { progressToken?: unknown } } } | undefined>;
  return messages.some((message) => message?.params?._meta?.progressToken !== undefined);
}

/**
 * A tool call the credential may not make is refused at the HTTP level, as the MCP authorization
 * specification says: 401 with the protected-resource metadata when no credential was sent (the
 * client then runs OAuth), 403 `insufficient_scope` naming the scopes when the credential lacks one
 * (the client may ask for them). Everything else a route refuses is the tool's `isError` result.
 */
function refuseUnauthorisedCalls(body: unknown, principal: Principal, catalogue: ToolCatalogue, challenge: (extra?: string) => Record<string, string>): void {
  for (const message of (Array.isArray(body) ? body : [body]) as JsonRpcMessage[]) {
    if (message?.method !== 'tools/call' || typeof message.params?.name !== 'string') continue;
    const tool = catalogue.find(message.params.name);
    if (!tool || principalMayCall(tool.route, principal)) continue;
    const { auth } = tool.route;
    if (principal.kind === 'anonymous') {
      throw new ServiceError('unauthorized', `The tool ${tool.name} needs a credential: authorize with OAuth (see WWW-Authenticate) or send a bearer token.`, {
        headers: challenge(),
      });
    }
    if (auth.kind === 'scoped') {
      const missing = auth.scopes.filter((scope) => !principal.scopes.includes(scope));
      if (missing.length > 0) {
        throw new ServiceError(
          `insufficient_scope:${missing.join(',')}`,
          `The tool ${tool.name} needs the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}.`,
          {
            headers: challenge(`, error="insufficient_scope", scope="${auth.scopes.join(' ')}"`),
          },
        );
      }
    }
  }
}
