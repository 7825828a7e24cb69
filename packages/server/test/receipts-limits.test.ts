import test from 'ava';
import { CompactReceipt } from '@svc/schemas';
import { ReceiptVerificationError, verifyReceipt } from '@svc/client';
import { ConfigError, loadConfig } from '../src/index.ts';

/** The receipt settings and sizes, each at its edge. */
test('SVC_RECEIPT_KEY_GENERATION defaults to 1 and takes 1..1000000; 0, 1000001 and non-integers stop the server naming it', (t) => {
  t.is(loadConfig({}).identity.receiptKeyGeneration, 1);
  for (const value of ['1', '1000000']) t.is(loadConfig({ SVC_RECEIPT_KEY_GENERATION: value }).identity.receiptKeyGeneration, Number(value));
  for (const value of ['0', '1000001', '2.5', 'next']) {
    t.throws(() => loadConfig({ SVC_RECEIPT_KEY_GENERATION: value }), { instanceOf: ConfigError, message: /SVC_RECEIPT_KEY_GENERATION/ }, value);
  }
});

/** A JWS of exactly `length` characters: three base64url parts. */
const jwsOfLength = (length: number) => `${'a'.repeat(length - 4)}.b.c`;

test('a receipt is at most 16384 characters: the schema the board and the client share takes 16384 and refuses 16385', async (t) => {
  t.true(CompactReceipt.safeParse(jwsOfLength(16_384)).success);
  t.false(CompactReceipt.safeParse(jwsOfLength(16_385)).success);
  const keys = { keys: [] };
  // At the limit the client reads the header (and finds it is not JSON); one past, it refuses on size alone.
  const atLimit = await t.throwsAsync(verifyReceipt(jwsOfLength(16_384), { keys, issuer: 'https://svc.example' }));
  t.regex(atLimit!.message, /header is not readable JSON/);
  const pastLimit = await t.throwsAsync(verifyReceipt(jwsOfLength(16_385), { keys, issuer: 'https://svc.example' }));
  t.true(ReceiptVerificationError.isInstance(pastLimit));
  t.regex(pastLimit!.message, /expected a compact JWS/);
});
