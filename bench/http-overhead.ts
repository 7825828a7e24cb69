/**
 * requests/s of a contract-mounted JSON endpoint (svc's adapter: request id, auth stage, body
 * reading, zod validation, typed response, latency headers, metrics, logging) against a
 * hand-written Koa handler doing the same work (read the body, parse JSON, validate with the
 * same zod schema, answer JSON with the `x-request-id`, `x-content-type-options` and
 * `x-svc-latency-ms` headers every svc response carries, so both send the same bytes; the
 * nosniff header joined svc's answers after the baseline was written, and the baseline
 * followed). A bare handler without those headers is
 * measured too and reported for reference: Node's header handling is a visible share of a
 * request this small. Each server runs in its own worker thread; autocannon drives
 * them in alternating short rounds from the main thread. Reported: the median of the per-pair
 * throughput ratios, and the ratio of CPU time per request spent by each server's thread, which
 * is what the overhead really costs and is far less sensitive to a noisy machine.
 * Target: ratio >= 0.85.
 *
 * Limits per key (docs/limits.md): a scoped route behind the real developer-key resolver and key
 * limiter, presented alternately a key with a requests-per-minute limit and one without; the
 * limit's count is one more database statement per request. Target: >= 0.8x of the run without.
 * The embedded database unless BENCH_DATABASE_URL names a PostgreSQL server.
 *
 * The keyed path (bench/keyed-path.ts): the full svc's scoped `GET /v1/models` called with the
 * operator token, a developer key and an agent token in rotating rounds; the keyed/operator ratios
 * of CPU per request and throughput, and on PostgreSQL the transactions per call.
 *
 * Run: pnpm bench:http-overhead [-- --rounds 10 --seconds 1 --concurrency 16 --part all|contract|limits|keyed]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
import { startWorkerServer, type WorkerServer } from './worker-server.ts';
import { benchArguments } from './args.ts';
import { createTestDatabase } from '@svc/testing/test-database';
import { runKeyedPath } from './keyed-path.ts';

const { values } = parseArgs({
  args: benchArguments(),
  options: {
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '16' },
    part: { type: 'string', default: 'all' },
  },
});
const rounds = Number(values.rounds);
const durationMs = Number(values.seconds) * 1000;
const concurrency = Number(values.concurrency);

async function startServer(kind: 'contract' | 'plain' | 'minimal'): Promise<WorkerServer> {
  const server = await startWorkerServer(new URL('./http-overhead-servers.ts', import.meta.url), { kind });
  return { ...server, url: `${server.url}/v1/echo` };
}

const payload = JSON.stringify({ text: 'the quick brown fox jumps over the lazy dog '.repeat(4), count: 7 });

/** One round against one server: requests/s and the server thread's CPU µs per request. */
async function measure(server: WorkerServer, ms: number, headers: Record<string, string> = {}): Promise<{ perSecond: number; cpuPerRequest: number }> {
  const cpuBefore = await server.cpuMicros();
  const result = await autocannon({
    url: server.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
    connections: concurrency,
    duration: ms / 1000,
  });
  const cpuAfter = await server.cpuMicros();
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { perSecond: result.requests.total / (ms / 1000), cpuPerRequest: (cpuAfter - cpuBefore) / Math.max(1, result.requests.total) };
}

/** svc's adapter on a public route against hand-written Koa (the ratio the README quotes). */
async function contractPart(): Promise<void> {
  const contract = await startServer('contract');
  const plain = await startServer('plain');
  const minimal = await startServer('minimal');

  // Warm both paths (JIT) well before measuring: early rounds run cold code.
  for (let warm = 0; warm < 3; warm++) {
    await measure(contract, 1000);
    await measure(plain, 1000);
    await measure(minimal, 1000);
  }

  // Alternating pairs, one ratio per pair, so a burst of noise hits both sides of a pair.
  const rateRatios: number[] = [];
  const cpuRatios: number[] = [];
  const minimalRatios: number[] = [];
  const contractRuns: Array<{ perSecond: number; cpuPerRequest: number }> = [];
  const plainRuns: Array<{ perSecond: number; cpuPerRequest: number }> = [];
  const rows: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [plain, contract] : [contract, plain];
    const first = await measure(order[0]!, durationMs);
    const second = await measure(order[1]!, durationMs);
    const [p, c] = order[0] === plain ? [first, second] : [second, first];
    contractRuns.push(c);
    plainRuns.push(p);
    rateRatios.push(c.perSecond / p.perSecond);
    cpuRatios.push(p.cpuPerRequest / c.cpuPerRequest);
    const m = await measure(minimal, durationMs);
    minimalRatios.push(m.cpuPerRequest / c.cpuPerRequest);
    rows.push(
      `  round ${round + 1}: plain ${p.perSecond.toFixed(0)} req/s ${p.cpuPerRequest.toFixed(0)} µs cpu/req | contract ${c.perSecond.toFixed(0)} req/s ${c.cpuPerRequest.toFixed(0)} µs cpu/req`,
    );
  }
  await contract.close();
  await plain.close();
  await minimal.close();

  const rateRatio = median(rateRatios);
  const cpuRatio = median(cpuRatios);
  const minimalRatio = median(minimalRatios);
  const target = { on: 'ratio', op: '>=', value: 0.85 } as const;
  const spread = (ratios: number[]) => `pair ratios ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`;
  reportFigures('http-overhead', [
    {
      figure: `requests/s, contract vs hand-written Koa, ${concurrency} connections`,
      svc: median(contractRuns.map((run) => run.perSecond)),
      baseline: median(plainRuns.map((run) => run.perSecond)),
      unit: 'req/s',
      ratio: rateRatio,
      target,
      note: `${rounds} alternating pairs x ${durationMs / 1000} s, ${spread(rateRatios)}`,
    },
    {
      figure: 'server CPU per request, contract vs hand-written Koa',
      svc: median(contractRuns.map((run) => run.cpuPerRequest)),
      baseline: median(plainRuns.map((run) => run.cpuPerRequest)),
      unit: 'µs',
      ratio: cpuRatio,
      target,
      note: `baseline/svc, ${spread(cpuRatios)}; a bare handler without the request-id and latency headers: ${minimalRatio.toFixed(2)}x`,
    },
  ]);
  process.stdout.write(
    [
      `http-overhead: ${rounds} paired rounds x ${durationMs / 1000} s, ${concurrency} connections, load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
      ...rows,
      `  throughput ratio contract/plain (median of pairs): ${rateRatio.toFixed(3)}`,
      `  server CPU per request ratio plain/contract (median of pairs): ${cpuRatio.toFixed(3)}`,
      `  for reference, CPU per request of a bare handler without those headers / contract: ${minimalRatio.toFixed(3)}`,
      `  target >= 0.85: ${rateRatio >= 0.85 ? 'met' : 'NOT met'} on throughput, ${cpuRatio >= 0.85 ? 'met' : 'NOT met'} on CPU per request`,
      '',
    ].join('\n'),
  );
}

/** A key with a requests-per-minute limit against one without, on the same server and database. */
async function limitsPart(): Promise<void> {
  const database = await createTestDatabase({ adminUrl: process.env.BENCH_DATABASE_URL, prefix: 'svc_bench_limits' });
  const server = await startWorkerServer(new URL('./http-overhead-keys-server.ts', import.meta.url), {
    databaseUrl: database.databaseUrl,
    dataDir: database.dataDir,
  });
  const keyed = { ...server, url: `${server.url}/v1/echo` };
  const { unlimitedKey, limitedKey } = await server.ask<{ unlimitedKey: string; limitedKey: string }>('keys', 'keys');
  const unlimited = { authorization: `Bearer ${unlimitedKey}` };
  const limited = { authorization: `Bearer ${limitedKey}` };
  for (let warm = 0; warm < 3; warm++) {
    await measure(keyed, 1000, unlimited);
    await measure(keyed, 1000, limited);
  }
  const rateRatios: number[] = [];
  const cpuRatios: number[] = [];
  const limitedRuns: Array<{ perSecond: number; cpuPerRequest: number }> = [];
  const unlimitedRuns: Array<{ perSecond: number; cpuPerRequest: number }> = [];
  const rows: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const limitedFirst = round % 2 === 1;
    const first = await measure(keyed, durationMs, limitedFirst ? limited : unlimited);
    const second = await measure(keyed, durationMs, limitedFirst ? unlimited : limited);
    const [u, l] = limitedFirst ? [second, first] : [first, second];
    limitedRuns.push(l);
    unlimitedRuns.push(u);
    rateRatios.push(l.perSecond / u.perSecond);
    cpuRatios.push(u.cpuPerRequest / l.cpuPerRequest);
    rows.push(
      `  round ${round + 1}: no limits ${u.perSecond.toFixed(0)} req/s ${u.cpuPerRequest.toFixed(0)} µs cpu/req | limited ${l.perSecond.toFixed(0)} req/s ${l.cpuPerRequest.toFixed(0)} µs cpu/req`,
    );
  }
  await server.close();
  await database.drop();
  const rateRatio = median(rateRatios);
  const cpuRatio = median(cpuRatios);
  const target = { on: 'ratio', op: '>=', value: 0.8 } as const;
  const spread = (ratios: number[]) => `pair ratios ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`;
  reportFigures('http-overhead', [
    {
      figure: `requests/s, a key with a requests-per-minute limit vs one without (${database.kind}), ${concurrency} connections`,
      svc: median(limitedRuns.map((run) => run.perSecond)),
      baseline: median(unlimitedRuns.map((run) => run.perSecond)),
      unit: 'req/s',
      ratio: rateRatio,
      target,
      note: `${rounds} alternating pairs x ${durationMs / 1000} s, ${spread(rateRatios)}; server CPU per request ${cpuRatio.toFixed(2)}x`,
    },
  ]);
  process.stdout.write(
    [
      `http-overhead, limits per key (${database.kind} database): ${rounds} paired rounds x ${durationMs / 1000} s, ${concurrency} connections, load average ${loadavg()
        .map((value) => value.toFixed(2))
        .join(' ')}`,
      ...rows,
      `  throughput ratio limited/unlimited (median of pairs): ${rateRatio.toFixed(3)}`,
      `  server CPU per request ratio unlimited/limited (median of pairs): ${cpuRatio.toFixed(3)}`,
      `  target >= 0.8: ${rateRatio >= 0.8 ? 'met' : 'NOT met'} on throughput`,
      '',
    ].join('\n'),
  );
}

if (values.part === 'all' || values.part === 'contract') await contractPart();
if (values.part === 'all' || values.part === 'limits') await limitsPart();
if (values.part === 'all' || values.part === 'keyed')
  await runKeyedPath({ route: 'json', rounds, seconds: durationMs / 1000, concurrency, chunks: 20, out: (text) => process.stdout.write(text) });
