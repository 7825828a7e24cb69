import { createHash } from 'node:crypto';
import test from 'ava';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The built-in store answers Range requests as GCS's signed URLs do: 206 with Content-Range, 416
 * past the end, ETag and Accept-Ranges on every answer, If-Range against another copy gets the
 * whole object. The signed URL checks are the same whatever the range.
 */
let svc: TestServer;
let location = '';
let object: Buffer;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  const redirect = await fetch(`${svc.apiUrl}/api/downloads/support-tickets-sample/tickets.csv`, { method: 'HEAD', redirect: 'manual' });
  location = redirect.headers.get('location')!;
  object = Buffer.from(await (await fetch(location)).arrayBuffer());
});
test.after.always(async () => {
  await svc?.close();
});

const get = async (headers: Record<string, string>, url = location) => {
  const response = await fetch(url, { headers });
  return { response, body: Buffer.from(await response.arrayBuffer()) };
};

test('a whole object: 200 with Accept-Ranges, ETag (the generation) and its length', async (t) => {
  const { response, body } = await get({});
  t.is(response.status, 200);
  t.is(response.headers.get('accept-ranges'), 'bytes');
  t.is(response.headers.get('etag'), `"${new URL(location).searchParams.get('generation')}"`);
  t.is(Number(response.headers.get('content-length')), object.length);
  t.true(body.equals(object));
  t.true(object.length > 10);
});

test('bytes=N- answers 206 from N to the end; bytes=a-b and a suffix the bytes they name', async (t) => {
  const size = object.length;
  const from = await get({ range: 'bytes=5-' });
  t.is(from.response.status, 206);
  t.is(from.response.headers.get('content-range'), `bytes 5-${size - 1}/${size}`);
  t.is(Number(from.response.headers.get('content-length')), size - 5);
  t.true(from.body.equals(object.subarray(5)));
  const middle = await get({ range: 'bytes=2-6' });
  t.is(middle.response.status, 206);
  t.true(middle.body.equals(object.subarray(2, 7)));
  const suffix = await get({ range: 'bytes=-3' });
  t.is(suffix.response.headers.get('content-range'), `bytes ${size - 3}-${size - 1}/${size}`);
  t.true(suffix.body.equals(object.subarray(size - 3)));
  // The edge: the last byte is a range, one past it is not.
  const last = await get({ range: `bytes=${size - 1}-` });
  t.is(last.response.status, 206);
  t.true(last.body.equals(object.subarray(size - 1)));
  const past = await get({ range: `bytes=${size}-` });
  t.is(past.response.status, 416);
  t.is(past.response.headers.get('content-range'), `bytes */${size}`);
  t.is(JSON.parse(past.body.toString()).code, 'range_not_satisfiable');
});

test('If-Range with the current ETag honours the range; another ETag gets the whole object; several ranges get it too', async (t) => {
  const etag = (await get({})).response.headers.get('etag')!;
  const same = await get({ range: 'bytes=4-', 'if-range': etag });
  t.is(same.response.status, 206);
  const other = await get({ range: 'bytes=4-', 'if-range': '"1"' });
  t.is(other.response.status, 200);
  t.is(createHash('sha256').update(other.body).digest('hex'), createHash('sha256').update(object).digest('hex'));
  const several = await get({ range: 'bytes=0-1,4-5' });
  t.is(several.response.status, 200);
});

test('a range does not loosen the signed URL checks: a tampered signature or another generation is still refused', async (t) => {
  const tampered = new URL(location);
  tampered.searchParams.set('x-goog-signature', '0'.repeat(64));
  t.is((await get({ range: 'bytes=0-' }, tampered.href)).response.status, 403);
  const otherGeneration = new URL(location);
  otherGeneration.searchParams.set('generation', '1');
  t.is((await get({ range: 'bytes=0-' }, otherGeneration.href)).response.status, 403);
});
