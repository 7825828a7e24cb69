import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { ConfigError, loadConfig } from '../src/index.ts';
import { startTestServer } from '@svc/testing/test-server';
import { UPSTREAM_SECRET } from './helpers/inference-upstream-setup.ts';

let directory: string;
test.before(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'svc-models-file-'));
});
test.after.always(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function modelsFile(name: string, content: unknown): Promise<string> {
  const file = path.join(directory, name);
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

function configIssues(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  return [];
}

const upstream = { id: 'main', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-in-the-file-0123456789' };

test('models file errors name the entry: unknown fallback, unknown upstream, bad capability, duplicate id, bad default', async (t) => {
  const file = await modelsFile('bad.json', {
    upstreams: [upstream],
    models: [
      { id: 'chat-a', upstream: 'main', capabilities: ['chat'] },
      { id: 'chat-b', upstream: 'elsewhere', capabilities: ['chat'] },
      { id: 'chat-c', upstream: 'main', capabilities: ['chat'], fallbacks: ['x'] },
      { id: 'chat-a', upstream: 'main' },
    ],
    defaults: { embeddings: 'chat-a', rerank: 'nope' },
  });
  const issues = configIssues({ SVC_MODELS_FILE: file });
  t.true(
    issues.some((issue) => issue.startsWith('models[2].fallbacks[0]: unknown model "x" (known: ')),
    issues.join('\n'),
  );
  t.true(issues.some((issue) => issue.startsWith('models[1].upstream: unknown upstream "elsewhere"')));
  t.true(issues.some((issue) => issue.startsWith('models[3].id: model "chat-a" is defined twice')));
  t.true(issues.includes('defaults.embeddings: model "chat-a" cannot serve embeddings (it serves chat)'));
  t.true(issues.some((issue) => issue.startsWith('defaults.rerank: unknown model "nope"')));
  t.false(issues.join('\n').includes('sk-in-the-file'), 'the key is never shown');

  const shape = configIssues({
    SVC_MODELS_FILE: await modelsFile('shape.json', {
      upstreams: [{ ...upstream, base_url: 'ftp://x' }],
      models: [{ id: 'm', upstream: 'main', capabilities: ['telepathy'] }],
      extra: 1,
    }),
  });
  t.true(
    shape.some((issue) => issue.startsWith('upstreams[0].base_url:')),
    shape.join('\n'),
  );
  t.true(
    shape.some((issue) => issue.startsWith('models[0].capabilities[0]:')),
    shape.join('\n'),
  );
  t.true(
    shape.some((issue) => /extra/.test(issue)),
    'unknown keys are refused (a typo would otherwise be ignored)',
  );

  t.regex(configIssues({ SVC_MODELS_FILE: await modelsFile('not-json.json', '{ "upstreams": [') })[0]!, /^SVC_MODELS_FILE: .* is not JSON/);
  t.regex(configIssues({ SVC_MODELS_FILE: path.join(directory, 'missing.json') })[0]!, /^SVC_MODELS_FILE: cannot read .*ENOENT/);
  t.deepEqual(
    configIssues({
      SVC_MODELS_FILE: await modelsFile('env-key.json', { upstreams: [{ id: 'main', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'UNSET_KEY_VARIABLE' }] }),
    }),
    ['upstreams[0].api_key_env: environment variable UNSET_KEY_VARIABLE is not set'],
  );
});

test('SVC_UPSTREAM_MODELS: ids with colons, capabilities guessed or named after =, and its errors', (t) => {
  const config = loadConfig({
    SVC_UPSTREAM_BASE_URL: 'http://127.0.0.1:11434/v1/',
    SVC_UPSTREAM_MODELS: 'llama3.1:8b, nomic-embed-text, bge-reranker-base, qwen3=chat+embeddings',
  });
  t.is(config.inference.upstreams[0]!.baseUrl, 'http://127.0.0.1:11434/v1');
  t.deepEqual(
    config.inference.models.map((model) => [model.id, model.capabilities]),
    [
      ['llama3.1:8b', ['chat']],
      ['nomic-embed-text', ['embeddings']],
      ['bge-reranker-base', ['rerank']],
      ['qwen3', ['chat', 'embeddings']],
    ],
  );
  t.deepEqual(configIssues({ SVC_UPSTREAM_BASE_URL: 'http://127.0.0.1:1/v1', SVC_UPSTREAM_MODELS: 'a=telepathy' }), [
    'SVC_UPSTREAM_MODELS: "a=telepathy": unknown capability "telepathy" (one of chat, embeddings, rerank, classify, summarize, rag, responses)',
  ]);
  t.deepEqual(configIssues({ SVC_UPSTREAM_MODELS: 'a', SVC_UPSTREAM_API_KEY: UPSTREAM_SECRET }), [
    'SVC_UPSTREAM_BASE_URL: required when SVC_UPSTREAM_MODELS or SVC_UPSTREAM_API_KEY is set',
  ]);
  t.true(
    configIssues({ SVC_UPSTREAM_BASE_URL: 'http://127.0.0.1:1/v1', SVC_UPSTREAM_MODELS: 'svc-hashed-ngrams-512' })[0]!.includes('defined twice'),
    'a built-in id cannot be taken',
  );
  const badTimeout = configIssues({
    SVC_UPSTREAM_BASE_URL: 'http://127.0.0.1:1/v1',
    SVC_UPSTREAM_MODELS: 'a',
    SVC_UPSTREAM_TIMEOUT_MS: '5',
    SVC_UPSTREAM_API_KEY: UPSTREAM_SECRET,
  });
  t.true(badTimeout[0]!.startsWith('SVC_UPSTREAM_TIMEOUT_MS='));
});

test('every configured model appears in /v1/models with its engine, fallbacks and defaults; no key, no address', async (t) => {
  const file = await modelsFile('good.json', {
    upstreams: [upstream, { id: 'backup', base_url: 'http://127.0.0.1:10/v1', api_key_env: 'BACKUP_KEY' }],
    models: [
      { id: 'team-chat', upstream: 'main', upstream_model: 'gpt-4o-mini', capabilities: ['chat'], fallbacks: ['backup-chat'], label: 'Team chat' },
      { id: 'backup-chat', upstream: 'backup', upstream_model: 'llama3.1:8b', capabilities: ['chat'] },
      { id: 'team-embed', upstream: 'main', upstream_model: 'text-embedding-3-small', capabilities: ['embeddings'], dimensions: 1536 },
    ],
    defaults: { chat: 'team-chat' },
  });
  const svc = await startTestServer({
    env: {
      SVC_MODELS_FILE: file,
      BACKUP_KEY: 'sk-backup-key-abcdef',
      SVC_UPSTREAM_BASE_URL: 'http://127.0.0.1:11/v1',
      SVC_UPSTREAM_API_KEY: UPSTREAM_SECRET,
      SVC_UPSTREAM_MODELS: 'env-chat',
    },
  });
  try {
    const response = await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${svc.operatorToken}` } });
    const text = await response.text();
    const body = JSON.parse(text) as {
      engines: Array<{ id: string; kind: string }>;
      data: Array<{
        id: string;
        engine: string;
        tasks: string[];
        fallbacks?: string[];
        default_for?: string[];
        dimensions?: number;
        method?: string;
        label: string;
      }>;
    };
    t.deepEqual(
      body.engines.map((engine) => [engine.id, engine.kind]),
      [
        ['builtin', 'builtin'],
        ['upstream', 'openai-compatible'],
        ['main', 'openai-compatible'],
        ['backup', 'openai-compatible'],
      ],
    );
    const byId = new Map(body.data.map((model) => [model.id, model]));
    for (const id of ['env-chat', 'team-chat', 'backup-chat', 'team-embed', 'svc-hashed-ngrams-512']) t.true(byId.has(id), `lists ${id}`);
    t.deepEqual(byId.get('team-chat')!.fallbacks, ['backup-chat']);
    // No model declared for responses: a Responses request naming none is chat's default's, translated.
    t.deepEqual(byId.get('team-chat')!.default_for, ['chat', 'responses']);
    t.is(byId.get('team-chat')!.label, 'Team chat');
    t.is(byId.get('team-chat')!.method, 'neural');
    t.is(byId.get('team-embed')!.dimensions, 1536);
    t.is(byId.get('backup-chat')!.engine, 'backup');
    for (const secret of [UPSTREAM_SECRET, 'sk-backup-key-abcdef', 'sk-in-the-file', '127.0.0.1:9', '127.0.0.1:10', '127.0.0.1:11'])
      t.false(text.includes(secret), `no ${secret}`);
  } finally {
    await svc.close();
  }
});

test('with no upstream configured, only the built-in engine serves, and embeddings still work', async (t) => {
  const svc = await startTestServer();
  try {
    const models = (await (await fetch(`${svc.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${svc.operatorToken}` } })).json()) as {
      engines: Array<{ id: string }>;
    };
    t.deepEqual(
      models.engines.map((engine) => engine.id),
      ['builtin'],
    );
    const response = await fetch(`${svc.baseUrl}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.operatorToken}` },
      body: JSON.stringify({ input: 'hello' }),
    });
    t.is(response.status, 200);
  } finally {
    await svc.close();
  }
});
