import test from 'ava';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import {
  ClientFactory as ClientFactoryV03,
  ClientFactoryOptions as ClientFactoryOptionsV03,
  DefaultAgentCardResolver as DefaultAgentCardResolverV03,
  JsonRpcTransportFactory as JsonRpcTransportFactoryV03,
} from 'a2a-sdk-v0-3/client';
import { createKey, signInAgent } from '@svc/testing/identity';
import { numberedPdf } from '@svc/testing/pdf-fixtures';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { waitUntil } from '@svc/testing/wait-until';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';

/**
 * What @a2a-js/sdk reads back, unchanged, in 1.0 (1.3.0) and 0.3 (0.3.14 itself): a canceled
 * task's state under the name the protocol gives it (TASK_STATE_CANCELED), and a pdf-extract task
 * whose stored history could not keep the PDF (issue 43: the 0.3 SDK threw "Invalid file part:
 * missing bytes or uri" on the empty file part svc kept; 1.0 decoded a part with no content).
 */
const certificate = selfSignedCertificate(['pdf.test']);
let svc: TestServer;
let source: HttpsSource;
let key: string;
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
  key = (await createKey((await signInAgent(svc)).client, ['inference:invoke'])).secret;
});
test.after.always(async () => {
  await svc?.close();
  await source?.close();
});

const withKey: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  headers.set('authorization', `Bearer ${key}`);
  return fetch(input, { ...init, headers });
};

async function clientV10(): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: withKey }),
      transports: [new JsonRpcTransportFactory({ fetchImpl: withKey })],
    }),
  );
  return factory.createFromUrl(svc.baseUrl);
}

async function clientV03() {
  const factory = new ClientFactoryV03(
    ClientFactoryOptionsV03.createFrom(ClientFactoryOptionsV03.default, {
      cardResolver: new DefaultAgentCardResolverV03({ fetchImpl: withKey }),
      transports: [new JsonRpcTransportFactoryV03({ fetchImpl: withKey })],
    }),
  );
  return factory.createFromUrl(svc.baseUrl);
}

const pdf = numberedPdf(2).toString('base64');
const stallUrl = () => `https://pdf.test:${source.port}/stall.pdf`;

test.serial('@a2a-js/sdk 1.0: a pdf-extract task reads back with a text note in place of the bytes it did not keep', async (t) => {
  const client = await clientV10();
  t.is(client.protocolVersion, '1.0');
  const sent = (await client.sendMessage(
    SendMessageRequest.fromJSON({
      message: {
        messageId: 'm-pdf-10',
        role: 'ROLE_USER',
        parts: [{ raw: pdf, mediaType: 'application/pdf', filename: 'two.pdf' }],
        metadata: { skill: 'pdf-extract' },
      },
    }),
  )) as Task;
  t.is(sent.status?.state, TaskState.TASK_STATE_COMPLETED);
  const got = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
  const part = got.history[0]?.parts[0];
  t.deepEqual(part?.content, { $case: 'text', value: '(A file (two.pdf, application/pdf) was sent; its bytes are not kept.)' });
});

test.serial('@a2a-js/sdk 0.3.14: a pdf-extract task reads back (tasks/get) without "Invalid file part"', async (t) => {
  const client = await clientV03();
  const sent = await client.sendMessage({
    message: {
      kind: 'message',
      messageId: 'm-pdf-03',
      role: 'user',
      parts: [{ kind: 'file', file: { bytes: pdf, mimeType: 'application/pdf', name: 'two.pdf' } }],
      metadata: { skill: 'pdf-extract' },
    },
  });
  t.is(sent.kind, 'task');
  if (sent.kind !== 'task') return;
  t.is(sent.status.state, 'completed');
  const got = await client.getTask({ id: sent.id });
  t.deepEqual(got.history?.[0]?.parts, [{ kind: 'text', text: '(A file (two.pdf, application/pdf) was sent; its bytes are not kept.)' }]);
  t.is(got.status.state, 'completed');
});

test.serial('@a2a-js/sdk 1.0: a canceled task reads TASK_STATE_CANCELED, from CancelTask and GetTask', async (t) => {
  const client = await clientV10();
  const started = (await client.sendMessage(
    SendMessageRequest.fromJSON({
      message: { messageId: 'm-stall-10', role: 'ROLE_USER', parts: [{ url: stallUrl() }], metadata: { skill: 'pdf-extract' } },
      configuration: { returnImmediately: true },
    }),
  )) as Task;
  await waitUntil('the PDF fetch reached the source', () => stalled === 1, { timeoutMs: 10_000 });
  const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
  t.is(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
  await waitUntil('the work was aborted', () => stalled === 0, { timeoutMs: 10_000 });
  t.is((await client.getTask({ tenant: '', id: started.id, historyLength: undefined })).status?.state, TaskState.TASK_STATE_CANCELED);
});

test.serial('@a2a-js/sdk 0.3.14: a canceled task reads canceled', async (t) => {
  const client = await clientV03();
  const started = await client.sendMessage({
    message: {
      kind: 'message',
      messageId: 'm-stall-03',
      role: 'user',
      parts: [{ kind: 'file', file: { uri: stallUrl() } }],
      metadata: { skill: 'pdf-extract' },
    },
    configuration: { blocking: false },
  });
  if (started.kind !== 'task') return t.fail('a task');
  await waitUntil('the PDF fetch reached the source', () => stalled === 1, { timeoutMs: 10_000 });
  t.is((await client.cancelTask({ id: started.id })).status.state, 'canceled');
  await waitUntil('the work was aborted', () => stalled === 0, { timeoutMs: 10_000 });
  t.is((await client.getTask({ id: started.id })).status.state, 'canceled');
});
