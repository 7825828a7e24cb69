/**
 * Built-in embeddings throughput: texts per second of `svc-hashed-ngrams-512`, in process
 * (embedText in a loop) and through HTTP (POST /v1/embeddings on a server in its own process,
 * batches of 256 texts), each against a baseline measured in the same run: a plain in-process
 * loop that only lower-cases and splits each text (the least any text pass costs). The load
 * average is printed with the figures, since the machine may be shared.
 *
 * Then the response cache: requests per second of hits against misses through a loopback
 * upstream (bench/embeddings-cache.ts), on the embedded database or, with --cache-database-url,
 * on PostgreSQL; the target is hits at least 5x a miss. The hits are of bodies the server holds
 * in memory since their miss stored them: on the embedded database such a hit reads nothing, on
 * PostgreSQL nothing within SVC_RESPONSE_CACHE_MEMORY_TRUST_MS (1 s) of the miss, and the row's
 * standing (not its body) after.
 *
 * Run: pnpm bench:embeddings [-- --texts 20000 --batch 256 --rounds 3 --cache-requests 200 --cache-batch 32 --cache-database-url postgres://...]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSvc } from './svc-servers.ts';
import { parseArgs } from 'node:util';
import { embedText } from '@svc/testing/server-internals';
import { median } from './stats.ts';
import { reportFigures } from './report.ts';
import { benchArguments } from './args.ts';
import { measureResponseCache } from './embeddings-cache.ts';

const { values } = parseArgs({
  args: benchArguments(),
  options: {
    texts: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '256' },
    rounds: { type: 'string', default: '3' },
    'cache-requests': { type: 'string', default: '200' },
    'cache-batch': { type: 'string', default: '32' },
    'cache-database-url': { type: 'string', default: '' },
  },
});
const textCount = Number(values.texts);
const batchSize = Number(values.batch);
const rounds = Number(values.rounds);
const OPERATOR_TOKEN = 'bench-embeddings-operator-token-0123456789';

/** Review-like sentences of 10 to 40 words from a fixed vocabulary, the same every run. */
function makeTexts(count: number): string[] {
  const words =
    'the model ranks passages by relevance and the index stores vectors for search queries over documents with embeddings of short reviews about products service delivery quality price support agents tools'.split(
      ' ',
    );
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () => Array.from({ length: 10 + Math.floor(next() * 30) }, () => words[Math.floor(next() * words.length)]).join(' '));
}

function textsPerSecond(texts: string[], work: (text: string) => unknown): number {
  const started = performance.now();
  let sink = 0;
  for (const text of texts) sink += (work(text) as { length: number }).length;
  const seconds = (performance.now() - started) / 1000;
  if (sink < 0) throw new Error('unreachable: keeps the loop from being optimised away');
  return texts.length / seconds;
}

/** svc-server on the embedded database in `dataDir`, with the bench's operator token. */
const startServer = (dataDir: string, env: Record<string, string> = {}) => spawnSvc(dataDir, { SVC_OPERATOR_TOKEN: OPERATOR_TOKEN, ...env });

async function httpTextsPerSecond(baseUrl: string, texts: string[]): Promise<number> {
  const started = performance.now();
  for (let start = 0; start < texts.length; start += batchSize) {
    const response = await fetch(`${baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${OPERATOR_TOKEN}` },
      body: JSON.stringify({ input: texts.slice(start, start + batchSize), encoding_format: 'base64' }),
    });
    if (response.status !== 200) throw new Error(`embeddings answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  }
  return texts.length / ((performance.now() - started) / 1000);
}

const texts = makeTexts(textCount);
const loadBefore = loadavg();
const baseline: number[] = [];
const inProcess: number[] = [];
const http: number[] = [];
const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-embeddings-'));
const server = await startServer(dataDir);
try {
  await httpTextsPerSecond(server.baseUrl, texts.slice(0, batchSize * 2)); // warm-up
  textsPerSecond(texts.slice(0, 2000), (text) => embedText(text));
  for (let round = 0; round < rounds; round++) {
    baseline.push(textsPerSecond(texts, (text) => text.toLowerCase().split(/\s+/)));
    inProcess.push(textsPerSecond(texts, (text) => embedText(text)));
    http.push(await httpTextsPerSecond(server.baseUrl, texts));
  }
} finally {
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
const cacheDataDir = await mkdtemp(path.join(tmpdir(), 'svc-bench-embeddings-cache-'));
const cacheOptions = { requests: Number(values['cache-requests']), batch: Number(values['cache-batch']), rounds };
let cache: Awaited<ReturnType<typeof measureResponseCache>>;
let unheld: Awaited<ReturnType<typeof measureResponseCache>>;
try {
  const cacheDatabaseUrl = values['cache-database-url'];
  const start = (env: Record<string, string>) => startServer(cacheDataDir, { ...env, DATABASE_URL: cacheDatabaseUrl });
  cache = await measureResponseCache(start, OPERATOR_TOKEN, texts, cacheOptions);
  // The same with no body held: each hit reads the body in the database, as another replica's first hit of an entry does.
  unheld = await measureResponseCache(start, OPERATOR_TOKEN, texts, { ...cacheOptions, env: { SVC_RESPONSE_CACHE_MEMORY_BYTES: '0' } });
} finally {
  await rm(cacheDataDir, { recursive: true, force: true });
}
const hitRatios = cache.map((round) => round.hitsPerSecond / round.missesPerSecond);
const unheldRatios = unheld.map((round) => round.hitsPerSecond / round.missesPerSecond);

const rate = (value: number) => `${Math.round(value).toLocaleString('en')} texts/s`;
const load = (values: number[]) => values.map((value) => value.toFixed(2)).join(' ');
process.stdout.write(
  [
    `built-in embeddings (svc-hashed-ngrams-512), ${textCount} texts of 10-40 words, median of ${rounds} rounds`,
    `  baseline loop (lower-case + split): ${rate(median(baseline))}`,
    `  in process (embedText):            ${rate(median(inProcess))}  = ${(median(inProcess) / median(baseline)).toFixed(3)} x baseline`,
    `  HTTP (batches of ${batchSize}, base64):     ${rate(median(http))}  = ${(median(http) / median(inProcess)).toFixed(3)} x in process`,
    `  response cache, ${cacheOptions.requests} requests of ${cacheOptions.batch} texts, one at a time, loopback upstream, ${values['cache-database-url'] ? 'PostgreSQL' : 'embedded database'}:`,
    `    misses (upstream call + store): ${median(cache.map((round) => round.missesPerSecond)).toFixed(0)} requests/s`,
    `    hits (${values['cache-database-url'] ? 'body held, its row read after 1 s' : 'body held, no read'}): ${median(cache.map((round) => round.hitsPerSecond)).toFixed(0)} requests/s  = ${median(hitRatios).toFixed(2)} x a miss (target >= 5x)`,
    `    with no body held (SVC_RESPONSE_CACHE_MEMORY_BYTES=0): misses ${median(unheld.map((round) => round.missesPerSecond)).toFixed(0)}, hits (one read of the row and its body) ${median(unheld.map((round) => round.hitsPerSecond)).toFixed(0)} requests/s  = ${median(unheldRatios).toFixed(2)} x a miss`,
    `  load average before: ${load(loadBefore)}, after: ${load(loadavg())} (${cpus().length} CPUs)`,
  ].join('\n') + '\n',
);
reportFigures('embeddings', [
  {
    figure: 'texts/s in process (svc-hashed-ngrams-512)',
    svc: median(inProcess),
    baseline: median(baseline),
    unit: 'texts/s',
    ratio: median(inProcess.map((value, round) => value / baseline[round]!)),
    note: 'baseline: a loop that only lower-cases and splits each text; no target is set',
  },
  {
    figure: `texts/s through HTTP (batches of ${batchSize})`,
    svc: median(http),
    baseline: median(inProcess),
    unit: 'texts/s',
    ratio: median(http.map((value, round) => value / inProcess[round]!)),
    note: 'baseline: the same embedding in process; no target is set',
  },
  {
    figure: `response cache hits vs misses (${cacheOptions.batch} texts, loopback upstream)`,
    svc: median(cache.map((round) => round.hitsPerSecond)),
    baseline: median(cache.map((round) => round.missesPerSecond)),
    unit: 'requests/s',
    ratio: median(hitRatios),
    target: { on: 'ratio', op: '>=', value: 5 },
    note: `baseline: the same requests the first time (upstream call and the write of the entry), one at a time, ${values['cache-database-url'] ? 'PostgreSQL' : 'embedded database'}`,
  },
  {
    figure: `response cache hits vs misses, no body held (${cacheOptions.batch} texts, loopback upstream)`,
    svc: median(unheld.map((round) => round.hitsPerSecond)),
    baseline: median(unheld.map((round) => round.missesPerSecond)),
    unit: 'requests/s',
    ratio: median(unheldRatios),
    note: `SVC_RESPONSE_CACHE_MEMORY_BYTES=0: each hit reads the row and its body, as another replica's first hit of an entry does; no target is set; ${values['cache-database-url'] ? 'PostgreSQL' : 'embedded database'}`,
  },
]);
