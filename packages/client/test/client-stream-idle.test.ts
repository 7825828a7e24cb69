import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { createClient, StreamIdleTimeoutError, SvcError, VerifiedDownloadError, type BlackboardRecord } from '@svc/client';
import { startServerBehindProxy } from '@svc/testing/server-behind-proxy';
import type { SilentProxy } from '@svc/testing/silent-proxy';
import type { TestServer } from '@svc/testing/test-server';

/**
 * The client's stream idle timeout (issue 44): a server that stops sending without closing must
 * not hang a streamed read forever. The real server sits behind a proxy that can go silent
 * partway through an answer (the connection stays open, nothing more comes), and the real client
 * reads through it with a short idle timeout: a download's body fails with `download_idle_timeout`
 * and keeps its partial to resume, an event stream fails with `stream_idle_timeout`, and the
 * board's watch reconnects and loses no post.
 */
const ARTIFACT = 'idle-weights';
const KIB = 1024;
/** Short, so the test does not wait; a loaded machine only makes the timeout fire later, never wrongly (the proxy is silent). */
const IDLE_MS = 1_000;

let svc: TestServer;
let proxy: SilentProxy;
let bytes: Buffer;

test.before(async () => {
  bytes = randomBytes(1024 * KIB);
  ({ svc, proxy } = await startServerBehindProxy(ARTIFACT, { 'weights.bin': bytes }));
});

test.after.always(async () => {
  await proxy?.close();
  await svc?.close();
});

const client = (streamIdleTimeout = IDLE_MS) =>
  createClient({ baseUrl: proxy.url, retry: 0, streamIdleTimeout, storagePolicy: { allowHttpLoopback: true, trustLoopbackServerStore: true } });

test.serial('a download whose store goes silent fails with download_idle_timeout, keeps its partial, and the next call resumes it', async (t) => {
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-idle-download-'));
  const destination = path.join(directory, 'weights.bin');
  const rule = proxy.silence({ match: (request) => request.url?.startsWith('/api/storage/') === true, afterBytes: 256 * KIB, times: 1 });
  try {
    const error = await t.throwsAsync(client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: 'weights.bin', destination }), {
      instanceOf: VerifiedDownloadError,
    });
    if (!error) return;
    t.is(error.code, 'download_idle_timeout');
    t.is(error.check, 'idle-timeout');
    t.true(error.cause instanceof StreamIdleTimeoutError);
    t.is((error.cause as SvcError).code, 'stream_idle_timeout');
    t.regex(error.message, /the object store sent nothing for 1000 ms and did not close/);
  } finally {
    proxy.release(rule);
  }
  t.deepEqual(
    (await readdir(directory)).sort(),
    ['.weights.bin.svc-partial', '.weights.bin.svc-partial.json'],
    'the partial stays to resume; nothing published, no lock',
  );
  t.is((await readFile(path.join(directory, '.weights.bin.svc-partial'))).length, 256 * KIB);

  const file = await client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: 'weights.bin', destination });
  t.is(file.outcome, 'resumed');
  t.is(file.transferredBytes, bytes.length - 256 * KIB);
  t.true((await readFile(destination)).equals(bytes));
});

test.serial(
  'a store that takes the connection and never sends headers fails the resume with download_idle_timeout, and the partial stays for the next call',
  async (t) => {
    const directory = await mkdtemp(path.join(tmpdir(), 'svc-idle-headers-'));
    const destination = path.join(directory, 'weights.bin');
    const partial = path.join(directory, '.weights.bin.svc-partial');
    const toStore = (request: { url?: string }) => request.url?.startsWith('/api/storage/') === true;
    // A first call leaves 256 KiB to resume.
    const midBody = proxy.silence({ match: toStore, afterBytes: 256 * KIB, times: 1 });
    try {
      await t.throwsAsync(client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: 'weights.bin', destination }), { instanceOf: VerifiedDownloadError });
    } finally {
      proxy.release(midBody);
    }
    t.is((await readFile(partial)).length, 256 * KIB);

    // The resume's request is taken and never answered: not a status line, not a header.
    const answered = proxy.answers.length;
    const noHeaders = proxy.silence({ match: toStore, afterBytes: 0, beforeHeaders: true, times: 1 });
    try {
      const error = await t.throwsAsync(client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: 'weights.bin', destination }), {
        instanceOf: VerifiedDownloadError,
      });
      t.is(error?.code, 'download_idle_timeout');
      t.is(error?.check, 'idle-timeout');
      t.regex(error?.message ?? '', /cannot fetch the signed URL: the object store sent nothing for 1000 ms and did not close/);
    } finally {
      proxy.release(noHeaders);
    }
    const silenced = proxy.answers.slice(answered).find((answer) => answer.silenced);
    t.is(silenced?.range, `bytes=${256 * KIB}-`, 'the silent store was asked for the rest only');
    t.is(silenced?.bytes, 0);
    t.deepEqual((await readdir(directory)).sort(), ['.weights.bin.svc-partial', '.weights.bin.svc-partial.json'], 'the partial and its record stay');
    t.is((await readFile(partial)).length, 256 * KIB);

    const file = await client().catalog.verifiedDownload({ artifactId: ARTIFACT, path: 'weights.bin', destination });
    t.is(file.outcome, 'resumed');
    t.is(file.transferredBytes, bytes.length - 256 * KIB);
    t.true((await readFile(destination)).equals(bytes));
  },
);

test.serial('an event stream that goes silent fails with stream_idle_timeout instead of waiting forever', async (t) => {
  const key = 'idle:raw-stream';
  const rule = proxy.silence({ match: (request) => request.url?.includes('/blackboard/watch') === true, afterBytes: 0, times: 1 });
  try {
    const events = await client().blackboard.stream({ query: { key }, headers: {} });
    const error = await t.throwsAsync(
      (async () => {
        for await (const _event of events) {
          // nothing arrives: the proxy holds every byte after the headers
        }
      })(),
      { instanceOf: StreamIdleTimeoutError },
    );
    t.is(error?.code, 'stream_idle_timeout');
    t.true(SvcError.isInstance(error));
  } finally {
    proxy.release(rule);
  }
});

test.serial(
  'a byte answer handed back as a Response (catalog.storageObject) fails its body read with stream_idle_timeout when the store goes silent',
  async (t) => {
    // The signed URL the download route redirects to names the stored object; its answer is raw bytes.
    const { location } = await client().catalog.download({ params: { id: ARTIFACT, path: 'weights.bin' } });
    const signed = new URL(location);
    const [, , bucket, ...key] = signed.pathname.split('/').slice(1);
    const rule = proxy.silence({ match: (request) => request.url?.startsWith('/api/storage/') === true, afterBytes: 256 * KIB, times: 1 });
    try {
      const answer = await client().catalog.storageObject({
        params: { bucket: bucket!, key: key.map(decodeURIComponent).join('/') },
        query: Object.fromEntries(signed.searchParams) as never,
      });
      t.is(answer.status, 200);
      t.is(answer.headers.get('content-length'), String(bytes.length));
      t.true(answer.url.startsWith(`${proxy.url}/api/storage/`), answer.url);
      const error = await t.throwsAsync(answer.arrayBuffer(), { instanceOf: StreamIdleTimeoutError });
      t.is(error?.code, 'stream_idle_timeout');
    } finally {
      proxy.release(rule);
    }
    // Unsilenced, the same call reads the whole object.
    const whole = await client().catalog.storageObject({
      params: { bucket: bucket!, key: key.map(decodeURIComponent).join('/') },
      query: Object.fromEntries(signed.searchParams) as never,
    });
    t.true(Buffer.from(await whole.arrayBuffer()).equals(bytes));
  },
);

test.serial("the board's watch reconnects when its push stream goes silent and still delivers the post made meanwhile, once", async (t) => {
  const key = 'idle:watch';
  const svcClient = client();
  const since = new Date(Date.now() - 1_000).toISOString();
  const rule = proxy.silence({ match: (request) => request.url?.includes('/blackboard/watch') === true, afterBytes: 0, times: 1 });
  const reconnects: unknown[] = [];
  const stop = new AbortController();
  const received: BlackboardRecord[] = [];
  try {
    const watching = (async () => {
      for await (const post of svcClient.blackboard.watch({
        key,
        since: { since },
        signal: stop.signal,
        reconnectMs: [50],
        onReconnect: (error) => reconnects.push(error),
      })) {
        received.push(post);
        if (received.length === 2) stop.abort();
      }
    })();
    // Made while the first stream is silent: the reconnect (Last-Event-ID from `since`) delivers it.
    const first = await svcClient.blackboard.put({ body: { key, value: { text: 'made while the stream was silent' } } });
    // Wait for the reconnect before the second post, so it comes through the new stream.
    while (reconnects.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await svcClient.blackboard.put({ body: { key, value: { text: 'made after the reconnect' } } });
    await watching;
    t.deepEqual(
      received.map((post) => post.id),
      [first.id, second.id],
      'each post once, in order',
    );
  } finally {
    stop.abort();
    proxy.release(rule);
  }
  t.true(reconnects[0] instanceof StreamIdleTimeoutError, String(reconnects[0]));
});

test.serial('a second call for a destination this process is already writing is refused with download_locked and changes nothing', async (t) => {
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-lock-in-process-'));
  const destination = path.join(directory, 'weights.bin');
  // No idle timeout here: the first call waits on the silent store for as long as the test needs.
  const rule = proxy.silence({ match: (request) => request.url?.startsWith('/api/storage/') === true, afterBytes: 256 * KIB, times: 1 });
  const first = client(0).catalog.verifiedDownload({ artifactId: ARTIFACT, path: 'weights.bin', destination });
  try {
    const partial = path.join(directory, '.weights.bin.svc-partial');
    while ((await readFile(partial).catch(() => Buffer.alloc(0))).length < 256 * KIB) await new Promise((resolve) => setTimeout(resolve, 20));
    const error = await t.throwsAsync(client(0).catalog.verifiedDownload({ artifactId: ARTIFACT, path: 'weights.bin', destination }), {
      instanceOf: VerifiedDownloadError,
    });
    t.is(error?.code, 'download_locked');
    t.regex(error?.message ?? '', new RegExp(`another download \\(pid ${process.pid} on `));
    t.is((await readFile(partial)).length, 256 * KIB, "the first call's partial is untouched");
  } finally {
    proxy.release(rule);
  }
  const file = await first;
  t.is(file.outcome, 'fetched');
  t.true((await readFile(destination)).equals(bytes));
  t.deepEqual(await readdir(directory), ['weights.bin']);
});
