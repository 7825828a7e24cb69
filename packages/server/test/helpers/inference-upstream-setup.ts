import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { ModelsFile } from '../../src/inference/openai-compatible/upstream-config.ts';
import type { UsageEvent } from '../../src/inference/usage-hook.ts';
import { startFakeOpenAiUpstream, type FakeUpstream, type FakeUpstreamOptions } from '@svc/testing/fake-openai-upstream';
import { createTestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** The key svc sends the fake; tests assert it never leaves svc. */
export const UPSTREAM_SECRET = 'sk-upstream-secret-4f8d2c9b7e1a6035';
export const SECOND_SECRET = 'sk-second-upstream-secret-b71e09d3';

export interface UpstreamHarness {
  svc: TestServer;
  fake: FakeUpstream;
  /** Everything the server logged, as text. */
  logs(): string;
  /** Every usage event the server reported. */
  usage: UsageEvent[];
  close(): Promise<void>;
}

/**
 * A server over a fake upstream: `SVC_UPSTREAM_*` serves `modelList`, and a models file adds
 * upstreams and models (with `{fake}` in a base URL replaced by the fake's), as an operator writes them.
 */
export async function startUpstreamHarness(
  options: { modelList?: string; modelsFile?: ModelsFile; env?: Record<string, string>; fake?: FakeUpstreamOptions } = {},
): Promise<UpstreamHarness> {
  const fake = await startFakeOpenAiUpstream(options.fake);
  const database = await createTestDatabase();
  const env: Record<string, string> = {
    SVC_UPSTREAM_BASE_URL: fake.baseUrl,
    SVC_UPSTREAM_API_KEY: UPSTREAM_SECRET,
    SVC_UPSTREAM_MODELS: options.modelList ?? 'answer-a',
    ...options.env,
  };
  if (options.modelsFile) {
    const file = path.join(database.dataDir, 'models.json');
    const upstreams = (options.modelsFile.upstreams ?? []).map((upstream) => ({ ...upstream, base_url: upstream.base_url.replace('{fake}', fake.origin) }));
    await writeFile(file, JSON.stringify({ ...options.modelsFile, upstreams }));
    env.SVC_MODELS_FILE = file;
  }
  let logText = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  });
  const svc = await startTestServer({ database, env, logger: pino({ level: 'debug' }, sink) });
  const usage: UsageEvent[] = [];
  svc.server.deps.usage.subscribe((event) => usage.push(event));
  return {
    svc,
    fake,
    logs: () => logText,
    usage,
    async close() {
      await svc.close();
      await database.drop();
      await fake.close();
    },
  };
}

/** A raw POST to svc, for what the openai client hides (status codes, SSE lines). */
export function postJson(svc: TestServer, route: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(`${svc.baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
    body: JSON.stringify(body),
    ...init,
  });
}

/** The data lines of an SSE body, in order (`[DONE]` kept as the string). */
export function sseData(text: string): unknown[] {
  return text
    .split('\n\n')
    .flatMap((event) => event.split('\n').filter((line) => line.startsWith('data: ')))
    .map((line) => line.slice(6))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}
