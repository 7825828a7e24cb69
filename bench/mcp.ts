/**
 * CPU per call of an MCP tool call against its REST twin on the same server: a 4-document rerank
 * as `POST /v1/rerank` and as `tools/call` of `inference_rerank` at `POST /mcp` (2026-07-28,
 * stateless: one request per call, as a remote MCP client sends it). Both carry the operator
 * token. The server runs in a worker thread; autocannon drives REST and MCP in alternating short
 * rounds from the main thread. Reported: the median of the per-pair ratios of the server thread's
 * CPU per call, MCP over REST (lower is better), and the throughput of each.
 * Target: CPU per call of the tool call at most 1.3x REST's.
 * Then the same tool call with a developer key and with an agent's access token beside the
 * operator token, in rotating rounds: their CPU per call and throughput against the operator's
 * (issue 42's keyed path; targets CPU per call <= 1.3x, throughput >= 0.8x).
 *
 * Run: pnpm bench:mcp [-- --rounds 8 --seconds 1 --concurrency 8]
 * BENCH_PROFILE_DIR=<dir> also writes the server thread's CPU profile of 3 s of REST calls alone
 * (rest.cpuprofile) and of 3 s of tool calls alone (mcp.cpuprofile), after the measured rounds.
 * It prints the calls each profile holds (for a per-call comparison of the two).
 * SVC_MCP_SDK_ONLY=1 (a diagnostic) sends the tool calls through the MCP SDK's handler instead of
 * svc's fast path for a plain tools/call (features/mcp/fast-tool-call.ts): the A/B of the two.
 */
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createTestDatabase } from '@svc/testing/test-database';
import { benchArguments } from './args.ts';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
import { startWorkerServer } from './worker-server.ts';

const { values } = parseArgs({
  args: benchArguments(),
  options: { rounds: { type: 'string', default: '8' }, seconds: { type: 'string', default: '1' }, concurrency: { type: 'string', default: '8' } },
});
const rounds = Number(values.rounds);
const durationMs = Number(values.seconds) * 1000;
const concurrency = Number(values.concurrency);

const database = await createTestDatabase({ prefix: 'svc_bench' });
const server = await startWorkerServer(new URL('./mcp-server.ts', import.meta.url), { databaseUrl: database.databaseUrl, dataDir: database.dataDir });
const token = await server.ask<string>('token', 'token');

const rerank = {
  query: 'how does postgres replicate writes to a standby',
  documents: [
    'Streaming replication ships WAL records from the primary to standbys as they are written.',
    'A sourdough starter needs flour, water and a few days of patience.',
    'Logical replication publishes row changes of chosen tables to subscribers.',
    'The tea ceremony values harmony, respect, purity and tranquillity.',
  ],
};
const revision = '2026-07-28';
const envelope = {
  'io.modelcontextprotocol/protocolVersion': revision,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
};
const shapes = {
  rest: { url: `${server.url}/v1/rerank`, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(rerank) },
  mcp: {
    url: `${server.url}/mcp`,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
      'mcp-protocol-version': revision,
      'mcp-method': 'tools/call',
      'mcp-name': 'inference_rerank',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: envelope, name: 'inference_rerank', arguments: rerank } }),
  },
} as const;

// One call of each first: both must succeed, and the tool's answer must be REST's.
const restAnswer = await (await fetch(shapes.rest.url, { method: 'POST', headers: shapes.rest.headers, body: shapes.rest.body })).json();
const mcpResponse = await fetch(shapes.mcp.url, { method: 'POST', headers: shapes.mcp.headers, body: shapes.mcp.body });
const mcpText = await mcpResponse.text();
const mcpJson = mcpText.startsWith('{')
  ? JSON.parse(mcpText)
  : JSON.parse(
      mcpText
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6),
    );
if (JSON.stringify(mcpJson.result?.structuredContent) !== JSON.stringify(restAnswer))
  throw new Error(`the tool answered ${mcpText.slice(0, 300)}, REST ${JSON.stringify(restAnswer).slice(0, 300)}`);

type Shape = { url: string; headers: Record<string, string>; body: string };
async function measure(kind: keyof typeof shapes | Shape, ms: number): Promise<{ perSecond: number; cpuPerCall: number }> {
  const shape: Shape = typeof kind === 'string' ? shapes[kind] : kind;
  const cpuBefore = await server.cpuMicros();
  const result = await autocannon({ url: shape.url, method: 'POST', headers: shape.headers, body: shape.body, connections: concurrency, duration: ms / 1000 });
  const cpuAfter = await server.cpuMicros();
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${shape.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { perSecond: result.requests.total / (ms / 1000), cpuPerCall: (cpuAfter - cpuBefore) / Math.max(1, result.requests.total) };
}

for (let warm = 0; warm < 2; warm++) {
  await measure('rest', 1000);
  await measure('mcp', 1000);
}
const ratios: number[] = [];
const restRuns: Array<{ perSecond: number; cpuPerCall: number }> = [];
const mcpRuns: Array<{ perSecond: number; cpuPerCall: number }> = [];
const rows: string[] = [];
for (let round = 0; round < rounds; round++) {
  const order: Array<keyof typeof shapes> = round % 2 === 0 ? ['rest', 'mcp'] : ['mcp', 'rest'];
  const first = await measure(order[0]!, durationMs);
  const second = await measure(order[1]!, durationMs);
  const [rest, mcp] = order[0] === 'rest' ? [first, second] : [second, first];
  restRuns.push(rest);
  mcpRuns.push(mcp);
  ratios.push(mcp.cpuPerCall / rest.cpuPerCall);
  rows.push(
    `  round ${round + 1}: rest ${rest.perSecond.toFixed(0)} calls/s ${rest.cpuPerCall.toFixed(0)} µs cpu/call | mcp ${mcp.perSecond.toFixed(0)} calls/s ${mcp.cpuPerCall.toFixed(0)} µs cpu/call`,
  );
}
// The keyed path: the same tool call with each credential a caller may hold, rotating which goes first.
const credentials = await server.ask<Record<Credential, string>>('credentials', 'credentials');
type Credential = 'operator' | 'key' | 'agent';
const CREDENTIALS: Credential[] = ['operator', 'key', 'agent'];
const mcpWith = (credential: Credential): Shape => ({ ...shapes.mcp, headers: { ...shapes.mcp.headers, authorization: `Bearer ${credentials[credential]}` } });
for (const credential of CREDENTIALS) await measure(mcpWith(credential), 1000);
const keyed = { key: { cpu: [] as number[], rate: [] as number[] }, agent: { cpu: [] as number[], rate: [] as number[] } };
const keyedRows: string[] = [];
for (let round = 0; round < rounds; round++) {
  const order = [...CREDENTIALS.slice(round % 3), ...CREDENTIALS.slice(0, round % 3)];
  const runs = new Map<Credential, { perSecond: number; cpuPerCall: number }>();
  for (const credential of order) runs.set(credential, await measure(mcpWith(credential), durationMs));
  const operator = runs.get('operator')!;
  for (const credential of ['key', 'agent'] as const) {
    keyed[credential].cpu.push(runs.get(credential)!.cpuPerCall / operator.cpuPerCall);
    keyed[credential].rate.push(runs.get(credential)!.perSecond / operator.perSecond);
  }
  keyedRows.push(
    `  keyed round ${round + 1}: ${CREDENTIALS.map((credential) => `${credential} ${runs.get(credential)!.perSecond.toFixed(0)} calls/s ${runs.get(credential)!.cpuPerCall.toFixed(0)} µs cpu/call`).join(' | ')}`,
  );
}
const keyedLine = (credential: 'key' | 'agent') => {
  const cpu = median(keyed[credential].cpu);
  const rate = median(keyed[credential].rate);
  return `  ${credential === 'key' ? 'developer key' : 'agent token'} / operator, MCP tools/call: CPU per call ${cpu.toFixed(2)}x (target <= 1.3: ${cpu <= 1.3 ? 'met' : 'NOT met'}), throughput ${rate.toFixed(2)}x (target >= 0.8: ${rate >= 0.8 ? 'met' : 'NOT met'})`;
};

const profileDir = process.env.BENCH_PROFILE_DIR;
if (profileDir) {
  for (const kind of ['rest', 'mcp'] as const) {
    await server.ask('profile:start', 'profiling');
    const profiled = await measure(kind, 3000);
    await server.ask(`profile:stop:${path.resolve(profileDir, `${kind}.cpuprofile`)}`, 'profiled');
    // The calls profiled, for a per-call comparison of the two profiles (/tmp/prof/cmp.mjs takes them).
    process.stdout.write(`profiled ${kind}: ${Math.round(profiled.perSecond * 3)} calls, ${profiled.cpuPerCall.toFixed(0)} µs cpu/call\n`);
  }
}
await server.close();
await database.drop();

const ratio = median(ratios);
reportFigures('mcp', [
  {
    figure: 'server CPU per 4-document rerank, MCP tools/call vs REST',
    svc: median(mcpRuns.map((run) => run.cpuPerCall)),
    baseline: median(restRuns.map((run) => run.cpuPerCall)),
    unit: 'µs',
    ratio,
    target: { on: 'ratio', op: '<', value: 1.3 },
    note: `mcp/rest, ${rounds} alternating pairs x ${durationMs / 1000} s, pair ratios ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}; REST ${median(restRuns.map((run) => run.perSecond)).toFixed(0)} calls/s, MCP ${median(mcpRuns.map((run) => run.perSecond)).toFixed(0)} calls/s`,
  },
  ...(['key', 'agent'] as const).map((credential) => ({
    figure: `MCP tools/call with ${credential === 'key' ? 'a developer key' : 'an agent token'} vs the operator token, CPU per call`,
    svc: median(keyed[credential].cpu),
    unit: 'x',
    target: { on: 'svc' as const, op: '<' as const, value: 1.3 },
    note: `throughput ${median(keyed[credential].rate).toFixed(2)}x the operator's (${rounds} rotating rounds x ${durationMs / 1000} s)`,
  })),
]);
process.stdout.write(
  [
    `mcp: ${rounds} paired rounds x ${durationMs / 1000} s, ${concurrency} connections, ${database.kind} database, load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`,
    ...rows,
    `  server CPU per call ratio mcp/rest (median of pairs): ${ratio.toFixed(3)}`,
    `  target <= 1.3: ${ratio <= 1.3 ? 'met' : 'NOT met'}`,
    ...keyedRows,
    keyedLine('key'),
    keyedLine('agent'),
    '',
  ].join('\n'),
);
