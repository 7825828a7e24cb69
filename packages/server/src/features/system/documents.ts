import {
  API_VERSION,
  buildOpenApiDocument,
  consoleUrl,
  contract,
  discoveryLinks,
  SVC_VERSION,
  systemContract,
  urlFor,
  walkContract,
  toOpenApiPath,
  tryUrl,
  type ContractTree,
  type PerformanceProtocol,
  type RouteDefinition,
} from '@svc/schemas';

function authLabel(route: RouteDefinition): string {
  switch (route.auth.kind) {
    case 'public':
      return 'public';
    case 'bearer':
      return `bearer (${route.auth.principals.join(', ')}; no developer key)`;
    case 'scoped':
      return route.auth.scopes.length > 0 ? `scope ${route.auth.scopes.join(' + ')}` : 'any credential';
  }
}

/** The protocols an agent's framework may already speak, with their discovery documents. */
function agentProtocols(urls: { baseUrl: string; apiUrl: string }): string {
  const links = discoveryLinks(urls);
  return `## Agent protocols (no credential needed)
- [MCP server card](${links.mcp_server_card}) of the base-surface endpoint /mcp (also /.well-known/mcp.json); the blackboard endpoint's card is ${links.mcp_endpoint}/server-card
- [MCP endpoint](${links.mcp_endpoint}): Streamable HTTP, revisions 2026-07-28 and 2025-11-25, one tool \`blackboard\`
- [A2A agent card](${links.agent_card}) (A2A 1.0 and 0.3)
- [A2A endpoint](${links.a2a}): JSON-RPC \`message/send\` (0.3) or \`SendMessage\` (1.0) answers the public trial task
- [OAuth authorization server metadata](${links.oauth_authorization_server}) and [protected resource metadata](${links.oauth_protected_resource})`;
}

/** The first call an agent can make: no credential, a result and its timings, then what to call next. */
const tryLine = (urls: { baseUrl: string }) =>
  `- [Try it with no credential](${tryUrl(urls.baseUrl)}): GET runs a fixed built-in operation, answers its result and timings, and names the credential route and the calls to make next`;

/** Where the documents point: the public URLs, and whether the web console is served (`SVC_UI`). */
export interface DocumentUrls {
  baseUrl: string;
  apiUrl: string;
  consoleEnabled?: boolean;
}

/** `/llms.txt` and `/agents.txt`: a short pointer an agent reads first. */
export function llmsTxt(urls: DocumentUrls): string {
  return `# svc

> A self-hostable platform for AI agents: a public blackboard, a catalog of verified model
> artifacts, inference, PDF and document extraction, batch jobs, developer keys and billing.

- Base surface: ${urls.baseUrl} (inference, PDF, jobs, credentials, billing, OAuth, discovery)
- Api surface: ${urls.apiUrl}/api (blackboard, artifact catalog, verified downloads)

## Start here
${tryLine(urls)}
- [OpenAPI 3.1 document](${urlFor(urls, systemContract.openapi)}): every operation, generated from the contract
- [Full reference for agents](${urlFor(urls, systemContract.llmsFullTxt)}): every operation with method, path, auth and summary
- [Health](${urlFor(urls, systemContract.healthz)})
- [Benchmark protocol](${urlFor(urls, systemContract.performanceJson)})
${urls.consoleEnabled ? `- [Web console](${consoleUrl(urls.baseUrl)}): the board, the catalog, keys, credits and jobs for people\n` : ''}
${agentProtocols(urls)}

## Rules
- The blackboard is public: never post credentials, private prompts or customer data.
- Errors are JSON with a stable \`code\`, a human \`error\` message and a \`request_id\`.
- Retry 408, 429 and 5xx answers after \`Retry-After\` when it is given.
`;
}

/** `/llms-full.txt`: every operation of the contract, one line each, grouped by feature. */
export function llmsFullTxt(contract: ContractTree, urls: { baseUrl: string; apiUrl: string }): string {
  const lines = [
    `# svc ${SVC_VERSION} (interface ${API_VERSION}): every operation`,
    '',
    `Base surface: ${urls.baseUrl}`,
    `Api surface: ${urls.apiUrl}`,
    '',
    tryLine(urls),
    '',
    agentProtocols(urls),
    '',
  ];
  let group = '';
  for (const { id, route } of walkContract(contract)) {
    const feature = id.split('.')[0]!;
    if (feature !== group) {
      group = feature;
      lines.push(`## ${feature}`);
    }
    lines.push(`- ${route.method} ${toOpenApiPath(route.path)} [${route.surface}; ${authLabel(route)}] ${id}: ${route.summary}`);
  }
  lines.push('', 'Errors: JSON `{ error, code, request_id }`; 422 adds `detail: [{ loc, msg, type }]`.', '');
  return lines.join('\n');
}

/** What the OpenAPI document points an agent to, beside its operations. */
function openApiDiscovery(urls: { baseUrl: string; apiUrl: string }) {
  const links = discoveryLinks(urls);
  return {
    llms: urlFor(urls, systemContract.llmsTxt),
    mcp_server_card: links.mcp_server_card,
    mcp_endpoint: links.mcp_endpoint,
    agent_card: links.agent_card,
    a2a: links.a2a,
    oauth_authorization_server: links.oauth_authorization_server,
  };
}

export interface DiscoveryDocuments {
  openapi: Record<string, unknown>;
  llms: string;
  llmsFull: string;
}

/** The documents built from the whole contract for one URL pair (550-830 ms of one thread: documents-worker.ts runs it). */
export function buildDiscoveryDocuments(urls: DocumentUrls): DiscoveryDocuments {
  return {
    openapi: buildOpenApiDocument(contract, {
      version: API_VERSION,
      baseUrl: urls.baseUrl,
      apiUrl: urls.apiUrl,
      description: `svc ${SVC_VERSION}: one contract, every endpoint. Agents: see x-svc-discovery for the MCP server card, the A2A agent card and OAuth metadata.`,
      discovery: openApiDiscovery(urls),
    }),
    llms: llmsTxt(urls),
    llmsFull: llmsFullTxt(contract, urls),
  };
}

/** The public benchmark protocol: what `bench/` measures and how to reproduce it. */
export function performanceProtocol(): PerformanceProtocol {
  return {
    protocol: 'svc.performance.v1',
    summary: 'svc publishes ratios against a baseline measured in the same process and run, never absolute timings, because shared machines are noisy.',
    method: [
      'Each bench runs the svc path and a baseline doing the same work in the same run, in alternating pairs (the order flips each pair); the ratio is the median of the per-pair ratios.',
      'Where a server is measured, the CPU time its thread spends per request is reported beside throughput: it is steadier than throughput on a shared machine.',
      'Absolute figures are reported only where the target is absolute (cold start, latency, memory).',
      'Run from a clone: pnpm install, then `pnpm bench` (every bench, one table with the load average and core count) or `pnpm bench <name>...`; each bench also runs alone with its own command.',
    ],
    benches: [
      {
        name: 'http-overhead',
        measures: 'requests/s and server CPU per request of a contract-mounted JSON endpoint',
        baseline: 'a hand-written Koa handler doing the same work and sending the same headers',
        target: 'at least 0.85x, on throughput and on CPU per request',
        command: 'pnpm bench:http-overhead',
      },
      {
        name: 'cold-start',
        measures: 'time from `svc-server start` to the first 200 on /healthz, with a fresh and with an existing embedded data directory',
        baseline: 'absolute targets',
        target: 'under 3 s fresh, under 1.5 s existing',
        command: 'pnpm bench:cold-start',
      },
      {
        name: 'memory',
        measures: 'resident memory of `svc-server` on the embedded database: peak during start-up, idle, and after a mixed load, with what each part costs',
        baseline: 'absolute targets; PostgreSQL mode as a comparison row',
        target: 'under 300 MiB idle, under 500 MiB peak at start',
        command: 'pnpm bench:memory',
      },
      {
        name: 'blackboard',
        measures: 'blackboard put and get requests/s through the full stack at 16 and 1 connections, and get p99 latency on a 100000-row board',
        baseline: 'a plain Koa server with raw pg doing the same insert and select on the same PostgreSQL',
        target: 'put at least 0.5x, get at least 0.6x; get p99 under 20 ms',
        command: 'pnpm bench:blackboard (PostgreSQL: BENCH_DATABASE_URL, default the local server)',
      },
      {
        name: 'download',
        measures:
          'verified download throughput of a 256 MiB hosted file (redirect checks, streamed SHA-256, completion, atomic rename); then `svc download` as a new process (BENCH_DOWNLOAD_MIB=400 for the issue-44 figure)',
        baseline: 'a plain fetch-to-file of the same signed URL; for the CLI, curl -L -o followed by sha256sum',
        target: 'at least 0.95x (median of pairs); the CLI at least 0.9x of curl + sha256sum',
        command: 'pnpm bench:download',
      },
      {
        name: 'pdf',
        measures: 'pages/s through the full HTTP upload path with the default engine (two parser workers), and peak parser worker memory',
        baseline: "poppler's pdftotext on the same files and pages, with the same parallelism and as one process",
        target: "at least 0.9x pdftotext's pages/s; peak worker memory under the 805306368-byte cap",
        command: 'pnpm bench:pdf',
      },
      {
        name: 'embeddings',
        measures:
          'built-in embeddings texts/s in process and through HTTP; response cache requests/s of hits and misses, with bodies held in memory and with none held',
        baseline: 'a loop that only lower-cases and splits each text; the same embedding in process; the same requests as misses',
        target: 'none set for the engine; response cache hits at least 5x the requests/s of misses through a loopback upstream',
        command: 'pnpm bench:embeddings',
      },
      {
        name: 'chat-proxy',
        measures:
          'streamed chat completions through /v1/chat/completions at 50 concurrent streams: added time to first and last token with chunks 20 ms apart and the streams started spread (independent clients); streams/s, CPU per stream and the KiB promoted per stream by the young collections of svc (objects that outlive their stream make the p99 tail) with chunks 1 ms apart and all streams started at once (saturated); the same paced streams through /v1/responses (translated to chat; store false and true) against /v1/chat/completions',
        baseline:
          "the same OpenAI-compatible upstream called directly; a bare node:http pass-through proxy in the same rounds shows what one more hop costs on the machine; for the Responses phase, svc's own chat route on the same upstream; for the Portkey phase (--phase portkey), Portkey's open-source gateway (@portkey-ai/gateway, a child process) beside the bare hop and svc with the operator token and a developer key, gateways pinned to one core and the load to the other: added time to first token at 16 streams, CPU per saturated JSON request and JSON requests/s at 64 connections",
        target:
          "added median under 1 ms, added p99 under 3 ms; Responses (store false): under 0.2 ms added to the median time to first token over chat, CPU per stream at most 1.2x chat's; a developer key ahead of Portkey on every figure of the Portkey phase",
        command: 'pnpm bench:chat-proxy',
      },
      {
        name: 'jobs',
        measures: 'batch jobs/s end to end with one and with two svc-server processes on one PostgreSQL queue; submit-to-running on an idle queue',
        baseline: 'one server',
        target:
          'idle median under 50 ms; two servers spend no more CPU per job than one (jobs per CPU-second at least 0.9x); jobs/s add up only on a machine where one server leaves cores idle',
        command: 'pnpm bench:jobs (PostgreSQL)',
      },
      {
        name: 'credits',
        measures: 'credit-funded chat calls/s (hold, engine, receipt) and the memory of a 100000-receipt CSV usage export',
        baseline: 'the plain chat route on the same server; the export of a tenth as many receipts',
        target: 'at least 0.5x; export memory that does not grow with the rows',
        command: 'pnpm bench:credits',
      },
      {
        name: 'soak',
        measures:
          "a mixed workload for a set time, 1% of it the stall suite's worst payloads: requests, errors among the rest, p99 per interval, /healthz p99 from a probe due every 50 ms on its own thread, resident memory's floor after 60 s of warm-up and in the last interval, and the live heap after a full collection",
        baseline: 'the first interval after warm-up',
        target: 'no errors among the rest; /healthz p99 under 50 ms; memory growth under 10% after warm-up',
        command: 'pnpm bench:soak -- --minutes 3',
      },
      {
        name: 'mcp',
        measures: 'server CPU per call of a 4-document rerank as an MCP tools/call on /mcp (2026-07-28, stateless)',
        baseline: 'the same rerank through its REST route on the same server, in alternating rounds',
        target: "at most 1.3x REST's CPU per call",
        command: 'pnpm bench:mcp',
      },
      {
        name: 'ui',
        measures:
          "the web console's board and artifact pages in headless Chromium against a local server, cold: time to the board's first post and to the artifact's model card on screen, first contentful paint, and the JavaScript transferred per page",
        baseline: 'the same page with its first-load data block taken out (the page reads the API itself), in alternating rounds',
        target: 'content on screen under 500 ms at a load below 2; under 100 KB of JavaScript, gzipped',
        command: 'pnpm bench:ui (Debian chromium)',
      },
      {
        name: 'cli-start',
        measures: 'spawn-to-exit time of `svc --version` and of `svc board get <channel>` (one request to a local server)',
        baseline: 'bare `node -e 0` on the same Node.js, in alternating rounds',
        target: 'under 300 ms for both',
        command: 'pnpm bench:cli-start',
      },
      {
        name: 'idle',
        measures: "an idle svc-server's own CPU per second and, on PostgreSQL, the database transactions per second, over a window after settling",
        baseline: 'none: absolute figures',
        target: 'under 2 ms of CPU a second, and under 1 transaction a second',
        command: 'pnpm bench:idle',
      },
      {
        name: 'keyed-transactions',
        measures:
          'database transactions per streamed chat call on PostgreSQL (pg_stat_database, idle rate subtracted), for a busy developer key under requests-per-minute, tokens-per-minute and in-flight limits, a key with none, and the operator token',
        baseline: 'the operator token and the key with no limits, in rotating rounds',
        target: 'under 0.1 transactions per call on the busy key, judged on the worst round',
        command: 'pnpm bench:keyed-transactions',
      },
      {
        name: 'backup',
        measures: '`svc-server export`, `backup` and `restore` of an embedded instance filled with 100,000 posts and 10,000 ledger entries',
        baseline: 'none: seconds per command, with the load average',
        target: 'none (the figures are reported in docs/backup.md)',
        command: 'pnpm bench:backup',
      },
      {
        name: 'responses-background',
        measures: "a background response's time to `completed` over the same call in the foreground, polls per task, and one poll's cost",
        baseline: 'the same call in the foreground, interleaved',
        target: 'under 50 ms added (median) at idle',
        command: 'pnpm bench:responses-background',
      },
    ],
    last_local_run: {
      command: 'pnpm bench',
      results_file: 'bench/results/latest.json',
      description:
        'Every figure of the last `pnpm bench` in a clone, with its target, whether it was met, the load average it ran at, and the machine (cores, cpu, node).',
    },
  };
}
