/**
 * Credits bench, two figures from one `svc-server` process (the binary, as a user runs it):
 *
 * 1. Credit-funded chat calls/s (`POST /v1/credits/chat/completions`, each call with its own
 *    Idempotency-Key, so each takes a hold, runs the engine and commits a receipt in the ledger)
 *    against the plain chat route (`POST /v1/chat/completions`) on the same server, built-in
 *    `svc-extractive-chat` model, in alternating rounds of the same run. Reported: calls/s per side
 *    and the median of the per-pair ratios. Target: at least 0.5x.
 * 2. The usage export of BENCH_RECEIPTS (default 100000) receipts streamed as CSV
 *    (`GET /v1/billing/usage?format=csv&all=true`), with the server's RSS sampled every 20 ms
 *    (from /proc) during the export: baseline, peak and growth, next to the same export of a tenth
 *    as many receipts (after one unmeasured warm-up export). Constant memory means the growth does
 *    not scale with the row count. With the embedded database its WASM heap lives in the server's
 *    process and is part of the RSS; with PostgreSQL the RSS is the server's alone.
 *
 *   pnpm bench:credits [-- --rounds 8 --seconds 2 --concurrency 16]
 *
 * The embedded database in a temporary directory unless BENCH_DATABASE_URL names a PostgreSQL
 * (a scratch database is created on it and dropped). Credits are granted and receipts seeded
 * straight in SQL while no server runs (PGlite belongs to one process at a time).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { createClient } from '@svc/client';
import { createLogger } from '@svc/server';
import { grantCredits, openDatabase } from '@svc/testing/server-internals';
import { startServerProcess, type ServerProcess } from '@svc/testing/server-process';
import { createTestDatabase, type TestDatabase } from '@svc/testing/test-database';
import { reportFigures } from './report.ts';
import { median } from './stats.ts';
import { benchArguments } from './args.ts';

type Sequelize = Awaited<ReturnType<typeof openDatabase>>['sequelize'];

const { values } = parseArgs({
  args: benchArguments(),
  options: { rounds: { type: 'string', default: '8' }, seconds: { type: 'string', default: '2' }, concurrency: { type: 'string', default: '16' } },
});
const ROUNDS = Number(values.rounds);
const DURATION_MS = Number(values.seconds) * 1000;
const CONCURRENCY = Number(values.concurrency);
const RECEIPTS = Number(process.env.BENCH_RECEIPTS ?? 100_000);
const SMALL_RECEIPTS = Math.max(1, Math.floor(RECEIPTS / 10));
const GRANTED = 100_000_000; // never the limit: the bench measures the ledger's cost, not a refusal
const ENV = { SVC_SIGNING_SECRET: `bench-credits-${randomBytes(16).toString('hex')}` };
const out = (line: string) => process.stdout.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
const log = createLogger('silent');

async function withDatabase<T>(database: TestDatabase, work: (sequelize: Sequelize) => Promise<T>): Promise<T> {
  const opened = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolMax: 2, log });
  try {
    return await work(opened.sequelize);
  } finally {
    await opened.close();
  }
}

/** `count` receipts for one principal in one statement (the `seed` prefix keeps ids apart). */
async function seedReceipts(sequelize: Sequelize, principalId: string, seed: string, count: number): Promise<void> {
  await sequelize.query(
    `INSERT INTO billing_receipts (id, principal_id, hold_id, created_at, credits, operation, model, request_id, idempotency_key, usage)
     SELECT 'rcpt_' || :seed || '_' || g, :principal, 'hold_' || :seed || '_' || g, now() - make_interval(secs => :count - g), 1, 'chat',
            'svc-extractive-chat', 'req_' || :seed || '_' || g, :seed || '-' || g, '{"prompt_tokens":7,"completion_tokens":42,"total_tokens":49}'::jsonb
     FROM generate_series(1, :count) AS g`,
    { replacements: { seed, principal: principalId, count } },
  );
}

/** An agent with a key for both routes; returns its principal id and key secret. */
async function customer(server: ServerProcess) {
  const anonymous = createClient({ baseUrl: server.baseUrl, apiUrl: server.baseUrl, retry: 0 });
  const session = await anonymous.oauth.login({ clientName: 'credits bench' });
  const agent = createClient({ baseUrl: server.baseUrl, apiUrl: server.baseUrl, token: session.accessToken, retry: 0 });
  const id = (await agent.oauth.whoami()).id;
  const key = await agent.developerKeys.create({ body: { name: 'credits bench', scopes: ['billing:read', 'billing:write', 'inference:invoke'] } });
  return { id, token: key.secret };
}

type Route = 'plain' | 'credits';
let callNumber = 0;

/** `CONCURRENCY` callers for `ms` against one route; answers calls/s. Every answer must be a 200. */
async function measure(baseUrl: string, token: string, route: Route, ms: number): Promise<number> {
  const url = `${baseUrl}${route === 'credits' ? '/v1/credits/chat/completions' : '/v1/chat/completions'}`;
  const until = performance.now() + ms;
  const started = performance.now();
  let calls = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const call = callNumber++;
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            ...(route === 'credits' ? { 'idempotency-key': `bench-${call}` } : {}),
          },
          body: JSON.stringify({ model: 'svc-extractive-chat', messages: [{ role: 'user', content: `What does svc do? (${call})` }] }),
        });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`${route}: status ${response.status}: ${text.slice(0, 300)}`);
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - started) / 1000);
}

const rssKiB = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);

/** Streams the CSV export to the end, sampling the server's RSS; answers rows, seconds and RSS figures (MiB). */
async function exportCsv(server: ServerProcess, token: string) {
  const pid = server.child.pid!;
  const baseline = await rssKiB(pid);
  let peak = baseline;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssKiB(pid));
      await sleep(20);
    }
  })();
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/v1/billing/usage?format=csv&all=true`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`export: status ${response.status}: ${await response.text()}`);
  let newlines = 0;
  let bytes = 0;
  const reader = response.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.length;
    for (const byte of read.value) if (byte === 10) newlines++;
  }
  const seconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  const mib = (kib: number) => kib / 1024;
  return { rows: newlines - 1, seconds, megabytes: bytes / 1_048_576, baseline: mib(baseline), peak: mib(peak), growth: mib(peak - baseline) };
}

async function main(): Promise<void> {
  const database = await createTestDatabase({ adminUrl: process.env.BENCH_DATABASE_URL, prefix: 'svc_bench_credits' });
  let server: ServerProcess | undefined;
  try {
    out(
      `credits bench (${database.kind}): ${ROUNDS} paired rounds x ${DURATION_MS / 1000} s, ${CONCURRENCY} callers; export of ${RECEIPTS} receipts; load ${load()}`,
    );
    server = await startServerProcess(database, ENV, { deadlineMs: 3_600_000 });
    const small = await customer(server);
    const large = await customer(server);
    await server.stop();
    await withDatabase(database, async (sequelize) => {
      await sequelize.transaction((transaction) => grantCredits(sequelize, transaction, large.id, GRANTED, 'bench-grant'));
      await seedReceipts(sequelize, small.id, 'small', SMALL_RECEIPTS);
      await seedReceipts(sequelize, large.id, 'large', RECEIPTS);
      await sequelize.query('ANALYZE billing_receipts');
    });
    server = await startServerProcess(database, ENV, { deadlineMs: 3_600_000 });

    // The export first, on a fresh server (its receipts are exactly the seeded ones). One unmeasured
    // small export warms the path (JIT, the embedded database's buffers) so the baseline is steady.
    await exportCsv(server, small.token);
    const smallExport = await exportCsv(server, small.token);
    const largeExport = await exportCsv(server, large.token);
    for (const [name, figures, expected] of [
      ['small', smallExport, SMALL_RECEIPTS],
      ['large', largeExport, RECEIPTS],
    ] as const) {
      if (figures.rows !== expected) throw new Error(`${name} export answered ${figures.rows} rows, expected ${expected}`);
      out(
        `usage export ${String(figures.rows).padStart(7)} receipts: ${figures.seconds.toFixed(2)} s (${(figures.rows / figures.seconds).toFixed(0)} rows/s, ${figures.megabytes.toFixed(1)} MiB CSV); ` +
          `server RSS ${figures.baseline.toFixed(1)} MiB before, peak ${figures.peak.toFixed(1)} MiB, growth ${figures.growth.toFixed(1)} MiB`,
      );
    }
    out(
      `  RSS growth ${RECEIPTS} vs ${SMALL_RECEIPTS} receipts: ${largeExport.growth.toFixed(1)} vs ${smallExport.growth.toFixed(1)} MiB for ${(largeExport.megabytes / smallExport.megabytes).toFixed(1)}x the bytes; load ${load()}`,
    );

    // Warm both routes (JIT, pool), then alternating pairs: noise hits both sides of a pair.
    for (let warm = 0; warm < 2; warm++) {
      await measure(server.baseUrl, large.token, 'plain', 1000);
      await measure(server.baseUrl, large.token, 'credits', 1000);
    }
    const ratios: number[] = [];
    const plainRates: number[] = [];
    const creditRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order: Route[] = round % 2 === 0 ? ['plain', 'credits'] : ['credits', 'plain'];
      const rates: Partial<Record<Route, number>> = {};
      for (const route of order) rates[route] = await measure(server.baseUrl, large.token, route, DURATION_MS);
      ratios.push(rates.credits! / rates.plain!);
      plainRates.push(rates.plain!);
      creditRates.push(rates.credits!);
      out(
        `  round ${round + 1}: plain ${rates.plain!.toFixed(0)} calls/s | credits ${rates.credits!.toFixed(0)} calls/s | ratio ${(rates.credits! / rates.plain!).toFixed(3)}`,
      );
    }
    const ratio = median(ratios);
    out(
      `credit-funded / plain chat calls/s (median of ${ROUNDS} pairs): ${ratio.toFixed(3)}x; target >= 0.5x ${ratio >= 0.5 ? 'met' : 'NOT met'}; load ${load()}`,
    );
    reportFigures('credits', [
      {
        figure: 'credit-funded vs plain chat calls/s',
        svc: median(creditRates),
        baseline: median(plainRates),
        unit: 'calls/s',
        ratio,
        target: { on: 'ratio', op: '>=', value: 0.5 },
        note: `${ROUNDS} alternating pairs of ${DURATION_MS / 1000} s, ${CONCURRENCY} connections, ${database.databaseUrl ? 'PostgreSQL' : 'embedded database'}`,
      },
      {
        figure: `usage export RSS growth, ${RECEIPTS} receipts`,
        svc: largeExport.growth,
        baseline: smallExport.growth,
        unit: 'MiB',
        note: `constant memory: the growth must not scale with the rows (baseline: the export of ${SMALL_RECEIPTS}); ${(largeExport.rows / largeExport.seconds).toFixed(0)} rows/s`,
      },
    ]);
  } finally {
    await server?.stop();
    await database.drop();
  }
}

await main();
