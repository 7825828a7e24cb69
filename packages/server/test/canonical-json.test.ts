import test from 'ava';
import { canonicalJson, requestFingerprint } from '../src/http/canonical-json.ts';

// What an idempotency key is bound to (requestFingerprint): a fingerprint stored by an earlier
// version must still match, so the canonical text is pinned here byte for byte.

test('keys sort by UTF-16 code units at every depth; undefined members are left out, undefined entries are null', (t) => {
  const value = JSON.parse('{"b":1,"a":[{"z":null,"Z":true}],"10":"x","2":"y","é":2,"\\ud83d\\ude00":3,"\\uffff":4,"__proto__":5}');
  value.a.push(undefined);
  value.skip = undefined;
  t.is(canonicalJson(value), '{"10":"x","2":"y","__proto__":5,"a":[{"Z":true,"z":null},null],"b":1,"é":2,"😀":3,"\uffff":4}');
});

test('primitives and empty containers are their JSON', (t) => {
  t.is(canonicalJson('é\u2028"'), JSON.stringify('é\u2028"'));
  t.is(canonicalJson(1.5), '1.5');
  t.is(canonicalJson(null), 'null');
  t.is(canonicalJson([]), '[]');
  t.is(canonicalJson({}), '{}');
  t.is(canonicalJson({ only: undefined }), '{}');
});

test('the fingerprint of the same request is the same whatever its key order, and differs for another route', (t) => {
  const one = requestFingerprint('jobs.submit', { operation: 'rerank', items: [{ query: 'q', documents: ['a'] }] });
  t.is(one, requestFingerprint('jobs.submit', { items: [{ documents: ['a'], query: 'q' }], operation: 'rerank' }));
  t.not(one, requestFingerprint('jobs.other', { operation: 'rerank', items: [{ query: 'q', documents: ['a'] }] }));
  t.regex(one, /^[A-Za-z0-9_-]{43}$/);
});
