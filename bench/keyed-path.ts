/**
 * The keyed path against the operator's (docs/identity.md, "Credential cache"; issue 42): one svc
 * in a worker thread in front of the chat-proxy bench's upstream (another worker thread), called
 * in rotating rounds with the operator token, a developer key, an agent's access token and a
 * developer key under requests, concurrency and token limits (`limited`, a busy key). Two
 * routes: `json`, the scoped JSON route `GET /v1/models`, and `chat`, a streamed chat completion
 * of `chunks` chunks sent back to back (saturated). Reported per credential: requests/s and svc's
 * CPU per request (its thread's), their ratios to the operator's (median of rounds), and on
 * PostgreSQL the database transactions per call (`pg_stat_database` xact_commit + xact_rollback
 * of the bench's database over the round, less the idle rate measured before the rounds).
 * Targets (issue 42): keyed CPU per request <= 1.3x the operator's, throughput >= 0.8x, and under
 * 0.1 transactions per keyed chat call (the limited key's too: its limits' slots, places and tokens
 * come in chunks, docs/limits.md).
 */
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { createTestDatabase } from '@svc/testing/test-database';
import { median } from './stats.ts';
import { startWorkerServer, type WorkerServer } from './worker-server.ts';

const CREDENTIALS = ['operator', 'key', 'agent', 'limited'] as const;
const KEYED = ['key', 'agent', 'limited'] as const;
const LABELS = { key: 'developer key', agent: 'agent token', limited: 'limited key' } as const;
type Credential = (typeof CREDENTIALS)[number];

interface Round {
  perSecond: number;
  cpuPerRequest: number;
}

export const CHAT_BODY = JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'hello' }], stream: true });

/**
 * PostgreSQL 15 and later send a backend's statistics at most once a second while it is busy, and
 * up to 10 s late once it is idle: a count read this long after the load stopped has all of it.
 */
export const STATS_SETTLE_MS = 11_000;
/** Each credential's load while its transactions are counted: long enough that the idle rate's noise is small beside it. */
const TRANSACTIONS_LOAD_MS = 10_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runKeyedPath(options: {
  route: 'json' | 'chat';
  rounds: number;
  seconds: number;
  concurrency: number;
  chunks: number;
  out: (line: string) => void;
}) {
  const { database, svc, transactions, close } = await startKeyedPathServers({
    adminUrl: process.env.BENCH_DATABASE_URL,
    prefix: 'svc_bench_keyed',
    chunks: options.chunks,
  });
  try {
    const tokens = await svc.ask<Record<Credential, string>>('credentials', 'credentials');
    const url = options.route === 'json' ? `${svc.url}/v1/models` : `${svc.url}/v1/chat/completions`;
    const measure = async (credential: Credential, ms: number): Promise<Round & { calls: number }> => {
      const cpuBefore = await svc.cpuMicros();
      const result = await autocannon({
        url,
        method: options.route === 'json' ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${tokens[credential]}`, ...(options.route === 'chat' ? { 'content-type': 'application/json' } : {}) },
        ...(options.route === 'chat' ? { body: CHAT_BODY } : {}),
        connections: options.concurrency,
        duration: ms / 1000,
      });
      const cpuAfter = await svc.cpuMicros();
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${credential}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      const calls = Math.max(1, result.requests.total);
      return {
        perSecond: result.requests.total / (ms / 1000),
        cpuPerRequest: (cpuAfter - cpuBefore) / calls,
        calls,
      };
    };
    for (let warm = 0; warm < 2; warm++) for (const credential of CREDENTIALS) await measure(credential, 1000);
    const runs = new Map<Credential, Round[]>(CREDENTIALS.map((credential) => [credential, []]));
    const ratios = Object.fromEntries(KEYED.map((credential) => [credential, { cpu: [] as number[], rate: [] as number[] }])) as Record<
      (typeof KEYED)[number],
      { cpu: number[]; rate: number[] }
    >;
    const rows: string[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const order = CREDENTIALS.map((_, index) => CREDENTIALS[(index + round) % CREDENTIALS.length]!);
      const measured = new Map<Credential, Round>();
      for (const credential of order) measured.set(credential, await measure(credential, options.seconds * 1000));
      const operator = measured.get('operator')!;
      for (const credential of KEYED) {
        ratios[credential].cpu.push(measured.get(credential)!.cpuPerRequest / operator.cpuPerRequest);
        ratios[credential].rate.push(measured.get(credential)!.perSecond / operator.perSecond);
      }
      for (const [credential, run] of measured) runs.get(credential)!.push(run);
      rows.push(
        `  round ${round + 1}: ${CREDENTIALS.map((credential) => {
          const run = measured.get(credential)!;
          return `${credential} ${run.perSecond.toFixed(0)} req/s ${run.cpuPerRequest.toFixed(0)} µs cpu/req`;
        }).join(' | ')}`,
      );
    }
    // Transactions per call (PostgreSQL): each credential's load alone, counted once the statistics settled, less the idle rate.
    const perCall = new Map<Credential, number>();
    let idlePerSecond = 0;
    if (database.kind === 'postgres') {
      await sleep(STATS_SETTLE_MS);
      const idleFrom = await transactions();
      await sleep(STATS_SETTLE_MS);
      idlePerSecond = ((await transactions()) - idleFrom - 1) / (STATS_SETTLE_MS / 1000);
      for (const credential of CREDENTIALS) {
        const from = await transactions();
        const started = performance.now();
        const { calls } = await measure(credential, TRANSACTIONS_LOAD_MS);
        await sleep(STATS_SETTLE_MS);
        const seconds = (performance.now() - started) / 1000;
        perCall.set(credential, Math.max(0, (await transactions()) - from - 1 - idlePerSecond * seconds) / calls);
      }
    }
    const figure = (credential: (typeof KEYED)[number]) => {
      const cpu = median(ratios[credential].cpu);
      const rate = median(ratios[credential].rate);
      const xactText = perCall.has(credential)
        ? `, ${perCall.get(credential)!.toFixed(3)} transactions per call (target < 0.1: ${perCall.get(credential)! < 0.1 ? 'met' : 'NOT met'}; operator ${perCall.get('operator')!.toFixed(3)})`
        : '';
      return `  ${LABELS[credential]} / operator: CPU per request ${cpu.toFixed(2)}x (target <= 1.3: ${cpu <= 1.3 ? 'met' : 'NOT met'}), throughput ${rate.toFixed(2)}x (target >= 0.8: ${rate >= 0.8 ? 'met' : 'NOT met'})${xactText}`;
    };
    options.out(
      [
        `keyed path, ${options.route === 'json' ? 'GET /v1/models' : `streamed chat (${options.chunks} chunks, back to back)`} (${database.kind} database): ${options.rounds} rotating rounds x ${options.seconds} s, ${options.concurrency} connections, load average ${loadavg()
          .map((value) => value.toFixed(2))
          .join(' ')}${database.kind === 'postgres' ? `, idle ${idlePerSecond.toFixed(1)} transactions/s subtracted` : ''}`,
        ...rows,
        ...KEYED.map(figure),
        '',
      ].join('\n'),
    );
  } finally {
    await close();
  }
}

/**
 * The keyed path's servers, shared with bench:keyed-transactions: a fresh database, the chat-proxy
 * bench's upstream and svc in worker threads, and the count of transactions that database ended
 * (read through svc's pool, the read one of them).
 */
export async function startKeyedPathServers(options: { adminUrl: string | undefined; prefix: string; chunks: number }) {
  const database = await createTestDatabase({ adminUrl: options.adminUrl, prefix: options.prefix });
  const upstream = await startWorkerServer(new URL('./chat-proxy-servers.ts', import.meta.url), { kind: 'upstream', chunks: options.chunks, gaps: {} });
  const svc: WorkerServer = await startWorkerServer(new URL('./keyed-path-server.ts', import.meta.url), {
    dataDir: database.dataDir,
    databaseUrl: database.databaseUrl,
    upstreamUrl: upstream.url,
  });
  return {
    database,
    svc,
    transactions: () => svc.ask<number>('transactions', 'transactions'),
    async close() {
      await svc.close();
      await upstream.close();
      await database.drop();
    },
  };
}
