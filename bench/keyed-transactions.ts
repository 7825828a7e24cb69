/**
 * `pnpm bench:keyed-transactions` (issue 42): database transactions per keyed chat call on
 * PostgreSQL, for a busy key under all three limits (requests and tokens per minute, requests in
 * flight) and for a key with none, the operator's beside them. The svc and upstream of the
 * keyed-path bench (bench/keyed-path-server.ts) in worker threads; each credential's streamed
 * chat calls (`--chunks` chunks, back to back) at `--concurrency` connections for `--seconds`,
 * alone, `--rounds` times in rotating order; transactions from `pg_stat_database` (xact_commit +
 * xact_rollback of the bench's scratch database), counted once the statistics settled, less the
 * idle rate measured before. Target: under 0.1 per call on the busy key, judged on the worst
 * round (issue 42 reports the worse of two runs). Most of a busy key's transactions are its chunks'
 * writes every 100 ms, so the figure falls as its calls per second rise: each round prints both.
 *
 * BENCH_DATABASE_URL names the PostgreSQL server (default: the local one); the embedded database
 * has no such statistics.
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchArguments } from './args.ts';
import { CHAT_BODY, STATS_SETTLE_MS, startKeyedPathServers } from './keyed-path.ts';
import { reportFigures } from './report.ts';

const CREDENTIALS = ['limited', 'key', 'operator'] as const;
type Credential = (typeof CREDENTIALS)[number];
const LABELS: Record<Credential, string> = { limited: 'key with all three limits', key: 'key with no limits', operator: 'operator token' };
const TARGET = 0.1;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const formatLoad = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

const { values } = parseArgs({
  args: benchArguments(),
  options: {
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '16' },
    chunks: { type: 'string', default: '20' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

const { database, svc, transactions, close } = await startKeyedPathServers({
  adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  prefix: 'svc_bench_keyed_xact',
  chunks: Number(values.chunks),
});
try {
  if (database.kind !== 'postgres') throw new Error('bench:keyed-transactions needs PostgreSQL (BENCH_DATABASE_URL)');
  const tokens = await svc.ask<Record<Credential, string>>('credentials', 'credentials');
  const load = async (credential: Credential, ms: number) => {
    const result = await autocannon({
      url: `${svc.url}/v1/chat/completions`,
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[credential]}`, 'content-type': 'application/json' },
      body: CHAT_BODY,
      connections: concurrency,
      duration: ms / 1000,
    });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${credential}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
    return Math.max(1, result.requests.total);
  };
  for (const credential of CREDENTIALS) await load(credential, 1000);
  await sleep(STATS_SETTLE_MS);
  const idleFrom = await transactions();
  await sleep(STATS_SETTLE_MS);
  const idlePerSecond = ((await transactions()) - idleFrom - 1) / (STATS_SETTLE_MS / 1000);
  const perCall = new Map<Credential, number[]>(CREDENTIALS.map((credential) => [credential, []]));
  const rows: string[] = [];
  for (let round = 0; round < rounds; round++) {
    const cells: string[] = [];
    for (let index = 0; index < CREDENTIALS.length; index++) {
      const credential = CREDENTIALS[(index + round) % CREDENTIALS.length]!;
      const from = await transactions();
      const started = performance.now();
      const calls = await load(credential, seconds * 1000);
      await sleep(STATS_SETTLE_MS);
      const elapsed = (performance.now() - started) / 1000;
      const counted = (await transactions()) - from - 1;
      const value = Math.max(0, counted - idlePerSecond * elapsed) / calls;
      perCall.get(credential)!.push(value);
      cells.push(`${credential} ${value.toFixed(3)} (${calls} calls, ${(calls / seconds).toFixed(0)}/s, ${counted} transactions)`);
    }
    rows.push(`  round ${round + 1}, load ${formatLoad()}: ${cells.join(' | ')}`);
  }
  const worst = (credential: Credential) => Math.max(...perCall.get(credential)!);
  const busy = worst('limited');
  reportFigures('keyed-transactions', [
    {
      figure: `transactions per chat call, ${LABELS.limited}, ${concurrency} streams (postgres)`,
      svc: busy,
      unit: 'xact/call',
      target: { on: 'svc', op: '<', value: TARGET },
      note: `worst of ${rounds} rounds x ${seconds} s; ${LABELS.key} ${worst('key').toFixed(3)}, operator ${worst('operator').toFixed(3)}; idle ${idlePerSecond.toFixed(1)}/s subtracted`,
    },
  ]);
  process.stdout.write(
    [
      `keyed transactions, streamed chat (${values.chunks} chunks), ${concurrency} connections, ${rounds} rotating rounds x ${seconds} s (postgres), idle ${idlePerSecond.toFixed(1)} transactions/s subtracted, load average ${formatLoad()}`,
      ...rows,
      ...CREDENTIALS.map((credential) => {
        const value = worst(credential);
        const verdict = credential === 'operator' ? '' : ` (target < ${TARGET}: ${value < TARGET ? 'met' : 'NOT met'})`;
        return `  ${LABELS[credential]}: ${value.toFixed(3)} transactions per call, the worst round${verdict}`;
      }),
      '',
    ].join('\n'),
  );
} finally {
  await close();
}
