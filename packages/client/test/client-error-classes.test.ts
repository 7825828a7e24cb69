import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { OAuthFlowError, parseAuthorizationRedirect, ReceiptVerificationError, SvcError, verifyReceipt } from '../src/index.ts';
import { BodyOverflowError, writeHashedBody } from '../src/catalog/hashed-file-write.ts';

/**
 * Every error the client throws is an SvcError, so one `SvcError.isInstance` branch (the CLI's,
 * a caller's) sees its stable `code`. Each is raised here by the function that throws it.
 */
async function caught(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

test('ReceiptVerificationError is an SvcError and keeps its name, code and its own isInstance', async (t) => {
  const error = await caught(() => verifyReceipt('not a receipt', { keys: { keys: [] }, issuer: 'https://svc.example' }));
  t.true(SvcError.isInstance(error));
  t.true(ReceiptVerificationError.isInstance(error));
  t.false(ReceiptVerificationError.isInstance(new SvcError('other', { code: 'other' })), 'its own check still tells it apart');
  const receipt = error as ReceiptVerificationError;
  t.is(receipt.name, 'ReceiptVerificationError');
  t.is(receipt.code, 'receipt_format_invalid');
  t.is(receipt.check, 'format');
  t.is(receipt.message, 'Not a receipt: expected a compact JWS (three base64url parts joined by dots).');
});

test('OAuthFlowError is an SvcError with the RFC 6749 error in its code', async (t) => {
  const refused = await caught(() => parseAuthorizationRedirect('http://127.0.0.1:8976/callback?error=access_denied&error_description=no'));
  t.true(SvcError.isInstance(refused));
  t.true(refused instanceof OAuthFlowError);
  const flow = refused as OAuthFlowError;
  t.is(flow.name, 'OAuthFlowError');
  t.is(flow.error, 'access_denied');
  t.is(flow.code, 'oauth_error:access_denied');
  t.is(flow.message, 'access_denied: no');
  const noCode = await caught(() => parseAuthorizationRedirect('http://127.0.0.1:8976/callback?state=x'));
  t.true(SvcError.isInstance(noCode));
  t.is((noCode as OAuthFlowError).code, 'oauth_error:invalid_response');
});

test('BodyOverflowError is an SvcError with the code body_overflow', async (t) => {
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.enqueue(new Uint8Array(1000));
    },
  });
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'svc-error-classes-')), 'over.bin');
  const error = await caught(() => writeHashedBody(endless, file, { inline: true, maxBytes: 2500 }));
  t.true(SvcError.isInstance(error));
  t.true(error instanceof BodyOverflowError);
  t.is((error as BodyOverflowError).code, 'body_overflow');
  t.is((error as BodyOverflowError).message, 'more than 2500 bytes');
});
