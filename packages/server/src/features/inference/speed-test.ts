import type { SpeedTestResponse } from '@svc/schemas';
import type { Sequelize } from 'sequelize';
import { consumeWindow } from '../../db/rate-counters.ts';
import { ServiceError } from '../../service-error.ts';
import type { ModelRegistry } from '../models/index.ts';
import type { InvocationContext } from './invoke-model.ts';

/** The fixed workload: the same texts on every call, so no caller controls the compute. */
const SENTENCES = Array.from(
  { length: 64 },
  (_, index) => `Sentence ${index + 1} of the svc speed test: agents embed, rerank and classify short texts like this one.`,
);
const WORKLOAD = `Embeddings of ${SENTENCES.length} fixed sentences on every engine that serves embeddings; engines that only chat answer one fixed four-token chat completion.`;
export const SPEED_TEST_CALLS_PER_MINUTE = 6;
const ENGINE_DEADLINE_MS = 10_000;

/**
 * Times the fixed workload on each available engine, one engine after another (so they do not
 * slow each other), each under its own deadline. Counted per caller in the database, so replicas
 * share the limit.
 */
export async function runSpeedTest(models: ModelRegistry, sequelize: Sequelize, call: InvocationContext): Promise<SpeedTestResponse> {
  const decision = await consumeWindow(sequelize, {
    bucket: `speed-test:principal:${call.principal.id}`,
    windowSeconds: 60,
    maxHits: SPEED_TEST_CALLS_PER_MINUTE,
  });
  if (!decision.allowed)
    throw new ServiceError(
      'rate_limited',
      `At most ${SPEED_TEST_CALLS_PER_MINUTE} speed tests a minute per caller; try again in ${decision.retryAfterSeconds} s.`,
      { retryAfterSeconds: decision.retryAfterSeconds },
    );
  const results: SpeedTestResponse['results'] = [];
  for (const engine of models.list().engines.filter((entry) => entry.available)) {
    const provider = models.provider(engine.id)!;
    const served = models.list().models.filter((model) => model.engine === engine.id);
    const embedder = served.find((model) => model.tasks.includes('embeddings'));
    const chatter = served.find((model) => model.tasks.includes('chat'));
    const chosen = embedder ?? chatter;
    if (!chosen) continue;
    const model = models.model(chosen.id)!;
    const signal = AbortSignal.any([call.signal, AbortSignal.timeout(ENGINE_DEADLINE_MS)]);
    const started = performance.now();
    const operation = embedder ? 'embeddings' : 'chat';
    const items = embedder ? SENTENCES.length : 1;
    try {
      if (embedder) await provider.embed!({ model, inputs: SENTENCES }, { signal, log: call.log });
      else await provider.chat!({ model, body: { messages: [{ role: 'user', content: 'Reply with OK.' }], max_tokens: 4 } }, { signal, log: call.log });
      const elapsed = performance.now() - started;
      results.push({
        engine: engine.id,
        model: model.id,
        operation,
        items,
        elapsed_ms: Math.round(elapsed * 1000) / 1000,
        items_per_second: Math.round((items / Math.max(elapsed, 0.001)) * 1000 * 10) / 10,
        ok: true,
      });
    } catch (error) {
      const elapsed = performance.now() - started;
      const reason =
        signal.aborted && !call.signal.aborted
          ? `no answer within ${ENGINE_DEADLINE_MS} ms`
          : error instanceof ServiceError
            ? error.message
            : 'the engine failed';
      results.push({ engine: engine.id, model: model.id, operation, items, elapsed_ms: Math.round(elapsed), items_per_second: 0, ok: false, error: reason });
    }
  }
  return { workload: WORKLOAD, results };
}
