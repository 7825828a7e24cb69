/**
 * The response cache's hit path against a miss's, for bench:embeddings: a server in its own
 * process over a loopback OpenAI-compatible upstream (the test kit's fake, answering
 * `/v1/embeddings` at once), one request at a time, batches of `batch` texts, base64. A round
 * sends `requests` distinct batches, in blocks of 20: the block's batches (each a miss: the
 * upstream call and the write of the entry), then the same batches again (each a hit of the body
 * the miss left held in memory: no read on the embedded database; on PostgreSQL none within
 * SVC_RESPONSE_CACHE_MEMORY_TRUST_MS of the miss, a read of the row's standing after). Blocks, so that on a shared machine whose load moves, misses and hits meet the same
 * load. Every answer's `x-svc-cache` is checked, so a round that did not hit or miss as planned
 * fails rather than measures.
 */
import { randomUUID } from 'node:crypto';
import { startFakeOpenAiUpstream } from '@svc/testing/fake-openai-upstream';

export interface CacheRound {
  missesPerSecond: number;
  hitsPerSecond: number;
}

type StartServer = (env: Record<string, string>) => Promise<{ baseUrl: string; stop: () => Promise<void> }>;

/** Sends the batches one at a time; answers the seconds they took. */
async function secondsFor(baseUrl: string, token: string, batches: string[][], expected: 'hit' | 'miss'): Promise<number> {
  const started = performance.now();
  for (const input of batches) {
    const response = await fetch(`${baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: 'embed-a', input, encoding_format: 'base64' }),
    });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`embeddings answered ${response.status}`);
    const cache = response.headers.get('x-svc-cache');
    if (cache !== expected) throw new Error(`expected x-svc-cache ${expected}, got ${cache}`);
  }
  return (performance.now() - started) / 1000;
}

/** Requests in a block: misses of a block, then its hits, so a change of the machine's load meets both alike. */
const BLOCK = 20;

export async function measureResponseCache(
  startServer: StartServer,
  token: string,
  texts: string[],
  options: { requests: number; batch: number; rounds: number; env?: Record<string, string> },
): Promise<CacheRound[]> {
  const upstream = await startFakeOpenAiUpstream();
  const server = await startServer({ SVC_UPSTREAM_BASE_URL: upstream.baseUrl, SVC_UPSTREAM_MODELS: 'embed-a=embeddings', ...options.env });
  // A run's own texts, so a database kept from an earlier run (PostgreSQL) holds none of them.
  const run = randomUUID().slice(0, 8);
  const batchesOf = (round: number) =>
    Array.from({ length: options.requests }, (_, request) =>
      Array.from({ length: options.batch }, (_, index) => `${run}.${round}.${request} ${texts[(request * options.batch + index) % texts.length]}`),
    );
  try {
    const warm = batchesOf(-1).slice(0, 20);
    await secondsFor(server.baseUrl, token, warm, 'miss');
    await secondsFor(server.baseUrl, token, warm, 'hit');
    const rounds: CacheRound[] = [];
    for (let round = 0; round < options.rounds; round++) {
      const batches = batchesOf(round);
      let missSeconds = 0;
      let hitSeconds = 0;
      for (let start = 0; start < batches.length; start += BLOCK) {
        const block = batches.slice(start, start + BLOCK);
        missSeconds += await secondsFor(server.baseUrl, token, block, 'miss');
        hitSeconds += await secondsFor(server.baseUrl, token, block, 'hit');
      }
      rounds.push({ missesPerSecond: batches.length / missSeconds, hitsPerSecond: batches.length / hitSeconds });
    }
    const upstreamCalls = upstream.requests.filter((request) => request.path === '/v1/embeddings').length;
    if (upstreamCalls !== warm.length + options.rounds * options.requests) throw new Error(`the upstream got ${upstreamCalls} calls: hits reached it`);
    return rounds;
  } finally {
    await server.stop();
    await upstream.close();
  }
}
