import test from 'ava';
import type { BatchJobResult } from '@svc/schemas';
import { selfSignedCertificate, startHttpsSource, type HttpsSource } from './helpers/https-source.ts';
import { signInAgent } from '@svc/testing/identity';
import { measureLoopHold } from './helpers/loop-hold.ts';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * resolve_link reads the title from the first 256 KiB of a page the caller chose. htmlparser2's
 * DOM builder was quadratic on unclosed tags, and DomUtils.findOne recursed once per level, so a
 * page of unclosed <div> before its title blew the stack; now one linear pass keeps the title.
 */
const HEAD_BYTES = 256 * 1024;
const TITLE_MAX_CHARS = 1024;
const LOOP_BUDGET_MS = 100;

const certificate = selfSignedCertificate(['links.test']);
const lookup = async (hostname: string) => {
  if (hostname !== 'links.test') throw new Error(`ENOTFOUND ${hostname}`);
  return [{ address: '127.0.0.1', family: 4 }];
};
const html = (body: string) => (_request: unknown, response: import('node:http').ServerResponse) =>
  response.writeHead(200, { 'content-type': 'text/html' }).end(body);
const pad = (head: string, unit: string, tail: string) => head + unit.repeat(Math.floor((HEAD_BYTES - head.length - tail.length) / unit.length)) + tail;

let source: HttpsSource;
let svc: TestServer;
let links = '';
test.before(async () => {
  source = await startHttpsSource(certificate, {
    '/deep': html(pad('<html><body>', '<div>', '<title> Late &amp; deep </title>')),
    '/mismatched': html(pad('<html><head><title>Stray closes</title></head><body>', '</span>', '')),
    '/long-title': html(pad('<html><head><title>', 'word   ', '</title></head>')),
    '/no-title': html(pad('<html><body>', '<ul><li>', '')),
  });
  links = `https://links.test:${source.port}`;
  svc = await startTestServer({ testSeams: { pdfSourceFetch: { lookup, ca: certificate.cert, allowAddresses: ['127.0.0.1'] } } });
});
test.after.always(async () => {
  await svc?.close();
  await source?.close();
});

function titles(result: BatchJobResult): unknown[] {
  return result.items.map((item) => (item.status === 'succeeded' ? (item.result as { title: string | null }).title : item.error.code));
}

test('resolve_link: titles of 256 KiB pages of unclosed, stray and nested tags, without holding the event loop', async (t) => {
  const { client } = await signInAgent(svc);
  const { result: job, heldMs } = await measureLoopHold(async () => {
    const submitted = await client.jobs.submit({
      schema: 'svc.batch-job-request.v1',
      operation: 'resolve_link',
      items: [{ url: `${links}/deep` }, { url: `${links}/mismatched` }, { url: `${links}/no-title` }],
    });
    return client.jobs.wait(submitted.job_id, { intervalMs: 20, maxIntervalMs: 200 });
  });
  const result = await client.jobs.result({ params: { job_id: job.job_id } });
  t.deepEqual(titles(result), ['Late & deep', 'Stray closes', null]);
  t.true(heldMs < LOOP_BUDGET_MS, `the event loop was held ${heldMs.toFixed(0)} ms`);
});

test('resolve_link: a title is kept up to its cap, whitespace runs counted as one space', async (t) => {
  const { client } = await signInAgent(svc);
  const submitted = await client.jobs.submit({ schema: 'svc.batch-job-request.v1', operation: 'resolve_link', items: [{ url: `${links}/long-title` }] });
  const job = await client.jobs.wait(submitted.job_id, { intervalMs: 20, maxIntervalMs: 200 });
  const [title] = titles(await client.jobs.result({ params: { job_id: job.job_id } })) as [string];
  t.is(title, 'word '.repeat(TITLE_MAX_CHARS).slice(0, TITLE_MAX_CHARS).trimEnd());
});
