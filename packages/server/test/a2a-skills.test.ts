import test from 'ava';
import { SendMessageRequest, TaskState, type Task, type AgentCard } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { createKey, signInAgent } from '@svc/testing/identity';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/**
 * A2A with a credential, proven with @a2a-js/sdk unchanged (its 1.0 default and its 0.3 legacy
 * mode): each skill is its REST route run in-process, so the artifact's data part is the REST
 * answer to the same input; tasks are stored per caller; a stream streams; cancel stops the work.
 * Serial: one caller runs at most 4 tasks at once (a2a-limits.test.ts proves that bound).
 */
const certificate = selfSignedCertificate(['pdf.test']);
let svc: TestServer;
let source: HttpsSource;
let key: string;
let otherKey: string;
let narrowKey: string;
/** Requests to the stalling PDF source still open (the fetch hangs until its caller aborts). */
let stalled = 0;

test.before(async () => {
  source = await startHttpsSource(certificate, {
    '/stall.pdf': (_request, response) => {
      stalled++;
      response.writeHead(200, { 'content-type': 'application/pdf', 'content-length': '100000' });
      response.write('%PDF-1.4\n');
      response.on('close', () => stalled--);
    },
  });
  const lookup = async () => [{ address: '127.0.0.1', family: 4 }];
  svc = await startTestServer({
    env: { SVC_PDF_FETCH_TIMEOUT_MS: '60000', SVC_PDF_RATE_LIMIT: '0' },
    testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } },
  });
  const [agent, other] = await Promise.all([signInAgent(svc), signInAgent(svc)]);
  key = (await createKey(agent.client, ['inference:invoke'])).secret;
  narrowKey = (await createKey(agent.client, ['models:read'])).secret;
  otherKey = (await createKey(other.client, ['inference:invoke'])).secret;
});
test.after.always(async () => {
  await svc?.close();
  await source?.close();
});

const withKey =
  (token: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };

/** The SDK's client as an agent builds it, its fetch carrying the credential. */
async function sdkClient(token: string, legacy: boolean): Promise<Client> {
  const fetchImpl = withKey(token);
  const legacyCompat = legacy ? { enabled: true } : undefined;
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat }),
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat })],
    }),
  );
  if (!legacy) return factory.createFromUrl(svc.baseUrl);
  const card = await new DefaultAgentCardResolver({ fetchImpl, legacyCompat }).resolve(svc.baseUrl);
  return factory.createFromAgentCard({ ...card, supportedInterfaces: card.supportedInterfaces.filter((entry) => entry.protocolVersion === '0.3') });
}

async function rest(method: 'GET' | 'POST', path: string, body?: unknown, token = key) {
  const response = await fetch(`${svc.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** A JSON-RPC call to /a2a with the credential given (null: none). */
async function rpc(body: unknown, token: string | null = key) {
  const response = await fetch(`${svc.baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

/**
 * The answers' `svc` member says which engine served the call and how long it took: equal in all
 * but the timings. A streamed PDF extraction also carries its phases as `timings_ms`, as REST's stream does.
 */
function withoutTimings(answer: any) {
  const { svc: servedBy, timings_ms: _timings, ...rest } = answer;
  return servedBy ? { ...rest, svc: { ...servedBy, latency_ms: undefined, timings: undefined } } : rest;
}

const dataOf = (task: Task) => {
  const part = task.artifacts[0]?.parts.find((candidate) => candidate.content?.$case === 'data');
  return part?.content?.$case === 'data' ? (part.content.value as any) : undefined;
};
const textOf = (task: Task) => {
  const part = task.artifacts[0]?.parts.find((candidate) => candidate.content?.$case === 'text');
  return part?.content?.$case === 'text' ? part.content.value : undefined;
};

const TEXT =
  'PostgreSQL is a relational database. It stores rows in tables and answers SQL. PGlite runs PostgreSQL in WebAssembly. svc keeps its state in PostgreSQL so that replicas agree. Caches are rebuilt from the database.';

for (const legacy of [false, true]) {
  const mode = legacy ? '0.3 legacy mode' : '1.0 default';

  test.serial(`@a2a-js/sdk ${mode}: the summarize skill completes with the REST answer as its data part`, async (t) => {
    const client = await sdkClient(key, legacy);
    t.is(client.protocolVersion, legacy ? '0.3' : '1.0');
    const answer = (await client.sendMessage(
      SendMessageRequest.fromJSON({
        message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: TEXT }], metadata: { skill: 'summarize' } },
      }),
    )) as Task;
    t.is(answer.status?.state, TaskState.TASK_STATE_COMPLETED);
    const expected = await rest('POST', '/v1/summarize', { text: TEXT });
    t.is(expected.status, 200);
    t.deepEqual(withoutTimings(dataOf(answer)), withoutTimings(expected.body));
    t.is(textOf(answer), expected.body.summary);
    // The task is stored: GetTask (tasks/get) reads it back.
    const again = await client.getTask({ tenant: '', id: answer.id, historyLength: undefined });
    t.is(again.status?.state, TaskState.TASK_STATE_COMPLETED);
    t.deepEqual(dataOf(again), dataOf(answer));
  });

  test.serial(`@a2a-js/sdk ${mode}: RAG named by a data part answers with its citations, as REST does`, async (t) => {
    const client = await sdkClient(key, legacy);
    const request = { question: 'Where does svc keep its state?', documents: [TEXT, 'Bananas are yellow.'] };
    const answer = (await client.sendMessage(
      SendMessageRequest.fromJSON({ message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ data: { skill: 'rag', ...request } }] } }),
    )) as Task;
    t.is(answer.status?.state, TaskState.TASK_STATE_COMPLETED);
    const expected = await rest('POST', '/v1/rag', request);
    const data = dataOf(answer);
    t.deepEqual(withoutTimings(data), withoutTimings(expected.body));
    t.true(data.citations.length > 0, 'citations are in the data part');
    t.is(data.citations[0].document_index, 0);
  });

  test.serial(`@a2a-js/sdk ${mode}: message/stream streams the task, its artifact and its final status`, async (t) => {
    const client = await sdkClient(key, legacy);
    const events: string[] = [];
    let artifactData: any;
    let taskId = '';
    const request = { query: 'replicas agree on state', documents: ['Bananas are yellow.', TEXT, 'Cats sleep a lot.', 'SQL answers queries.'] };
    for await (const event of client.sendMessageStream(
      SendMessageRequest.fromJSON({
        message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ data: request }], metadata: { skill: 'rerank' } },
      }),
    )) {
      const payload = event.payload;
      if (payload?.$case === 'artifactUpdate') {
        events.push('artifact');
        const part = payload.value.artifact?.parts.find((candidate) => candidate.content?.$case === 'data');
        artifactData = part?.content?.$case === 'data' ? part.content.value : undefined;
      } else if (payload?.$case === 'statusUpdate') {
        events.push(`status:${payload.value.status?.state}`);
      } else if (payload?.$case === 'task') {
        events.push(`task:${payload.value.status?.state}`);
        taskId = payload.value.id;
      }
    }
    t.deepEqual(events, [`task:${TaskState.TASK_STATE_WORKING}`, 'artifact', `status:${TaskState.TASK_STATE_COMPLETED}`]);
    const expected = await rest('POST', '/v1/rerank', request);
    t.deepEqual(withoutTimings(artifactData), withoutTimings(expected.body));
    t.is(artifactData.results[0].index, 1, 'the relevant document first');
    t.is((await client.getTask({ tenant: '', id: taskId, historyLength: undefined })).status?.state, TaskState.TASK_STATE_COMPLETED);
  });

  test.serial(`@a2a-js/sdk ${mode}: message/stream of summarize streams the route's own events, then the REST answer`, async (t) => {
    const client = await sdkClient(key, legacy);
    const kinds: string[] = [];
    const progress: Array<{ event: string; data: any }> = [];
    let result: any;
    for await (const event of client.sendMessageStream(
      SendMessageRequest.fromJSON({
        message: {
          messageId: `m-${Math.random()}`,
          role: 'ROLE_USER',
          parts: [{ text: TEXT }, { data: { max_sentences: 2 } }],
          metadata: { skill: 'summarize' },
        },
      }),
    )) {
      const payload = event.payload;
      if (payload?.$case !== 'artifactUpdate') {
        kinds.push(payload?.$case === 'task' ? 'task' : `status:${payload?.$case === 'statusUpdate' ? payload.value.status?.state : ''}`);
        continue;
      }
      const artifact = payload.value.artifact!;
      const data = artifact.parts.find((part) => part.content?.$case === 'data')?.content;
      if (artifact.name === 'progress') {
        kinds.push(payload.value.append ? 'progress+' : 'progress');
        if (data?.$case === 'data') progress.push(data.value as any);
      } else {
        kinds.push('result');
        if (data?.$case === 'data') result = data.value;
      }
    }
    t.deepEqual(kinds, ['task', 'progress', 'progress+', 'result', `status:${TaskState.TASK_STATE_COMPLETED}`]);
    t.deepEqual(
      progress.map((chunk) => chunk.event),
      ['sentence-selected', 'sentence-selected'],
    );
    const expected = await rest('POST', '/v1/summarize', { text: TEXT, max_sentences: 2 });
    t.deepEqual(withoutTimings(result), withoutTimings(expected.body));
    t.deepEqual(
      progress.map((chunk) => chunk.data.text),
      expected.body.sentences.map((sentence: any) => sentence.text),
    );
  });

  test.serial(`@a2a-js/sdk ${mode}: the extended card lists the skills this credential may use`, async (t) => {
    const full = await (await sdkClient(key, legacy)).getAgentCard();
    t.deepEqual(
      full.skills.map((skill) => skill.id),
      ['public-trial', 'blackboard', 'rag', 'summarize', 'classify', 'rerank', 'catalog-search', 'pdf-extract'],
    );
    const narrow: AgentCard = await (await sdkClient(narrowKey, legacy)).getAgentCard();
    t.deepEqual(
      narrow.skills.map((skill) => skill.id),
      ['public-trial', 'blackboard'],
    );
  });

  test.serial(`@a2a-js/sdk ${mode}: another caller's task is not found`, async (t) => {
    const mine = (await (
      await sdkClient(key, legacy)
    ).sendMessage(
      SendMessageRequest.fromJSON({
        message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: TEXT }], metadata: { skill: 'summarize' } },
      }),
    )) as Task;
    const theirs = await sdkClient(otherKey, legacy);
    const error = await t.throwsAsync(theirs.getTask({ tenant: '', id: mine.id, historyLength: undefined }));
    t.regex(String(error?.message), /not found/i);
  });
}

test.serial('every skill over raw JSON-RPC answers what its REST route answers', async (t) => {
  const pdf = numberedPdf(3);
  const cases: Array<[string, Record<string, unknown>[], 'GET' | 'POST', string, unknown]> = [
    [
      'classify',
      [
        { kind: 'text', text: 'I love this, it is wonderful' },
        { kind: 'text', text: 'This is terrible and I hate it' },
        { kind: 'data', data: { task: 'sentiment' } },
      ],
      'POST',
      '/v1/classify',
      { task: 'sentiment', inputs: ['I love this, it is wonderful', 'This is terrible and I hate it'] },
    ],
    ['catalog-search', [{ kind: 'text', text: 'reranker' }], 'GET', '/api/artifacts?q=reranker', undefined],
    [
      'pdf-extract',
      [
        { kind: 'file', file: { bytes: pdf.toString('base64'), mimeType: 'application/pdf', name: 'three.pdf' } },
        { kind: 'data', data: { max_pages: 2 } },
      ],
      'POST',
      '/v1/pdf/extract',
      { data_base64: pdf.toString('base64'), max_pages: 2 },
    ],
  ];
  for (const [skill, parts, method, path, body] of cases) {
    const answer = await rpc({
      jsonrpc: '2.0',
      id: skill,
      method: 'message/send',
      params: { message: { messageId: `m-${skill}`, role: 'user', parts, metadata: { skill } } },
    });
    t.is(answer.status, 200, skill);
    t.is(answer.body.result.status.state, 'completed', `${skill}: ${JSON.stringify(answer.body.result.status)}`);
    const data = answer.body.result.artifacts[0].parts[1].data;
    const expected = path.startsWith('/api/')
      ? await (await fetch(`${svc.apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })).json()
      : (await rest(method, path, body)).body;
    t.deepEqual(withoutTimings(data), withoutTimings(expected), skill);
  }
  // The stored history keeps a note naming the file, not its bytes (nor an empty file part).
  const stored = await rpc({
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: { message: { messageId: 'm-pdf', role: 'user', parts: [cases[2]![1][0]], metadata: { skill: 'pdf-extract' } } },
  });
  const got = await rpc({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: stored.body.result.id } });
  t.deepEqual(got.body.result.history[0].parts[0], { kind: 'text', text: '(A file (three.pdf, application/pdf) was sent; its bytes are not kept.)' });
});

test.serial('message/stream of a PDF streams its pages as they are extracted; the result is the REST answer', async (t) => {
  const pdf = numberedPdf(3);
  const response = await fetch(`${svc.baseUrl}/a2a`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'pdf-stream',
      method: 'message/stream',
      params: {
        message: {
          messageId: 'm-pdf-stream',
          role: 'user',
          parts: [{ kind: 'file', file: { bytes: pdf.toString('base64') } }],
          metadata: { skill: 'pdf-extract' },
        },
      },
    }),
  });
  t.regex(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const results = (await response.text())
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)).result);
  t.deepEqual(
    results.map((result) => result.kind),
    ['task', 'artifact-update', 'artifact-update', 'artifact-update', 'artifact-update', 'status-update'],
  );
  const pages = results.filter((result) => result.artifact?.name === 'progress').map((result) => result.artifact.parts[0].data);
  t.deepEqual(
    pages.map((page) => [page.event, page.data.page_number]),
    [
      ['page-extracted', 1],
      ['page-extracted', 2],
      ['page-extracted', 3],
    ],
  );
  const expected = await rest('POST', '/v1/pdf/extract', { data_base64: pdf.toString('base64') });
  t.deepEqual(withoutTimings(results[4].artifact.parts[1].data), withoutTimings(expected.body));
  t.true(results[5].final);
  t.is(results[5].status.state, 'completed');
});

test.serial('a skill whose REST route refuses the input ends its task failed with the REST error body', async (t) => {
  const answer = await rpc({
    jsonrpc: '2.0',
    id: 'bad',
    method: 'SendMessage',
    params: { message: { messageId: 'm-bad', role: 'ROLE_USER', parts: [{ data: { query: 'x', documents: [] } }], metadata: { skill: 'rerank' } } },
  });
  t.is(answer.status, 200);
  const task = answer.body.result.task;
  t.is(task.status.state, 'TASK_STATE_FAILED');
  const expected = await rest('POST', '/v1/rerank', { query: 'x', documents: [] });
  t.is(expected.status, 422);
  const error = task.status.message.parts[1].data;
  t.is(error.status, 422);
  t.deepEqual({ ...error.body, request_id: undefined }, { ...expected.body, request_id: undefined });
});

test.serial('unknown skill, missing scope, invalid token and a message naming no skill', async (t) => {
  const send = (metadata: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id: 'x',
    method: 'message/send',
    params: { message: { messageId: 'm-x', role: 'user', parts: [{ kind: 'text', text: 'hi' }], metadata } },
  });
  const unknown = await rpc(send({ skill: 'translate' }));
  t.is(unknown.status, 400);
  t.is(unknown.body.error.code, -32602);
  t.is(unknown.body.error.data.code, 'a2a_unknown_skill');
  t.is(unknown.body.error.message, 'Unknown skill "translate"; the skills are rag, summarize, classify, rerank, catalog-search, pdf-extract.');
  const narrow = await rpc(send({ skill: 'summarize' }), narrowKey);
  t.is(narrow.status, 403);
  t.is(narrow.body.error.data.code, 'insufficient_scope:inference:invoke');
  const invalid = await rpc(send({ skill: 'summarize' }), 'not-a-real-token');
  t.is(invalid.status, 401);
  t.regex(invalid.headers.get('www-authenticate') ?? '', /resource_metadata=/);
  const trial = await rpc(send({}));
  t.is(trial.status, 200);
  t.is(trial.body.result.id, 'svc-public-trial-v1', 'no skill named: the trial task, nothing run');
  const foreign = await rpc({ jsonrpc: '2.0', id: 'g', method: 'tasks/get', params: { id: 'a2a-unknown' } });
  t.is(foreign.status, 404);
  t.is(foreign.body.error.code, -32001);
});

test.serial('bodies: without a credential the trial cap stays 64 KiB; with one a PDF of some MiB fits', async (t) => {
  const big = {
    jsonrpc: '2.0',
    id: 'b',
    method: 'message/send',
    params: { message: { messageId: 'm', role: 'user', parts: [{ kind: 'text', text: 'a'.repeat(70_000) }] } },
  };
  const anonymous = await rpc(big, null);
  t.is(anonymous.status, 413);
  t.is(anonymous.body.error.data.code, 'payload_too_large');
  const withCredential = await rpc(big);
  t.is(withCredential.status, 200, 'no skill named: the trial, read whole');
});

test.serial('tasks/cancel stops a running task: the skill work is aborted and the task reads canceled', async (t) => {
  const started = await rpc({
    jsonrpc: '2.0',
    id: 's',
    method: 'message/send',
    params: {
      message: {
        messageId: 'm-stall',
        role: 'user',
        parts: [{ kind: 'file', file: { uri: `https://pdf.test:${source.port}/stall.pdf` } }],
        metadata: { skill: 'pdf-extract' },
      },
      configuration: { blocking: false },
    },
  });
  t.is(started.status, 200, JSON.stringify(started.body));
  const task = started.body.result;
  t.is(task.status.state, 'working');
  await waitUntil('the PDF fetch reached the source', () => stalled === 1, { timeoutMs: 10_000 });
  const canceled = await rpc({ jsonrpc: '2.0', id: 'c', method: 'tasks/cancel', params: { id: task.id } });
  t.is(canceled.status, 200);
  t.is(canceled.body.result.status.state, 'canceled');
  await waitUntil('the source connection closed: the work was aborted', () => stalled === 0, { timeoutMs: 10_000 });
  // A retried cancel is safe: the canceled task again. A finished task is not cancelable (-32002).
  const again = await rpc({ jsonrpc: '2.0', id: 'c2', method: 'tasks/cancel', params: { id: task.id } });
  t.is(again.status, 200);
  t.is(again.body.result.status.state, 'canceled');
  const done = await rpc({
    jsonrpc: '2.0',
    id: 'd',
    method: 'message/send',
    params: { message: { messageId: 'm-done', role: 'user', parts: [{ kind: 'text', text: TEXT }], metadata: { skill: 'summarize' } } },
  });
  const finished = await rpc({ jsonrpc: '2.0', id: 'c4', method: 'tasks/cancel', params: { id: done.body.result.id } });
  t.is(finished.status, 409);
  t.is(finished.body.error.code, -32002);
  t.is(finished.body.error.data.code, 'a2a_task_not_cancelable');
  const got = await rpc({ jsonrpc: '2.0', id: 'g', method: 'tasks/get', params: { id: task.id } });
  t.is(got.body.result.status.state, 'canceled');
  const foreign = await rpc({ jsonrpc: '2.0', id: 'c3', method: 'tasks/cancel', params: { id: task.id } }, otherKey);
  t.is(foreign.status, 404);
});
