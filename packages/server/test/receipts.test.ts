import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createLocalJWKSet, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { QueryTypes } from 'sequelize';
import { ReceiptVerificationError, verifyReceipt, type SvcClient } from '@svc/client';
import type { BlackboardRecord } from '@svc/schemas';
import { signInAgent, createKey } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

let svc: TestServer;
let downloader: SvcClient;
test.before(async () => {
  svc = await startTestServer({ env: { SVC_CATALOG_DEMO: 'on' } });
  const host = new URL(svc.apiUrl).host;
  downloader = svc.client({ token: 'downloader-bearer', storagePolicy: { hosts: [host], allowHttpLoopback: true } });
});
test.after.always(async () => {
  await svc?.close();
});

async function downloadReceipt(file = 'tickets.csv', client = downloader) {
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-receipts-'));
  return client.catalog.verifiedDownload({ artifactId: 'support-tickets-sample', path: file, destination: path.join(directory, file) });
}

/** Puts `value` and reads it back every way the board reads: put answer, show, get, query. */
async function postAndReadBack(key: string, value: Record<string, unknown>): Promise<BlackboardRecord[]> {
  const board = svc.client().blackboard;
  const put = await board.put({ body: { key, value: { text: 'pulled and checked', ...value } } });
  const shown = await board.show({ params: { id: put.id } });
  const got = (await board.getPost({ body: { key } })).items.find((item) => item.id === put.id)!;
  const queried = (await board.queryPost({ body: { key } })).items.find((item) => item.id === put.id)!;
  return [put, shown, got, queried];
}

const tamper = (jws: string) => {
  const [header, payload, signature] = jws.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
  claims.facts.size_bytes += 1;
  return [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
};

test('the JWKS is public and the authorization-server metadata points at it', async (t) => {
  const response = await fetch(`${svc.baseUrl}/.well-known/jwks.json`);
  t.is(response.status, 200);
  const jwks = (await response.json()) as { keys: Array<Record<string, string>> };
  t.is(jwks.keys.length, 1);
  t.like(jwks.keys[0], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
  t.false('d' in jwks.keys[0]!, 'never the private part');
  const metadata = await svc.client().oauth.authorizationServer();
  t.is(metadata.jwks_uri, `${svc.baseUrl}/.well-known/jwks.json`);
});

test('a real download completion carries a receipt any JOSE library verifies with the published keys alone', async (t) => {
  const file = await downloadReceipt();
  const { receipt, recordId, sha256, sizeBytes } = file.completion;
  const jwks = await svc.client().receipts.jwks();
  // jose directly (not our client): a third party needs nothing of svc but the key set.
  const { payload, protectedHeader } = await jwtVerify(receipt, createLocalJWKSet(jwks), { issuer: svc.baseUrl, typ: 'svc-receipt+jwt' });
  t.is(protectedHeader.alg, 'EdDSA');
  t.is(protectedHeader.kid, jwks.keys[0]!.kid);
  t.like(payload, { kind: 'download-completion', record_id: recordId });
  t.deepEqual(payload.facts, {
    artifact_id: 'support-tickets-sample',
    revision: file.revision,
    path: 'tickets.csv',
    sha256,
    size_bytes: sizeBytes,
    recorded_at: file.completion.recordedAt,
  });
  t.is(payload.iat, Math.floor(Date.parse(file.completion.recordedAt) / 1000));
});

test('a completion receipt posted on the board reads back verified everywhere; the same record answers the same receipt', async (t) => {
  const first = await downloadReceipt('README.md');
  // The same caller pulling the same bytes again within the day is the same record, and so the same receipt.
  const again = await downloadReceipt('README.md');
  t.is(again.completion.status, 'already-recorded');
  t.is(again.completion.recordId, first.completion.recordId);
  t.is(again.completion.receipt, first.completion.receipt);

  const reads = await postAndReadBack('receipts:verified', { kind: 'result', receipt: { jws: first.completion.receipt, note: 'kept verbatim' } });
  for (const record of reads) {
    t.true(record.receipt_verified);
    t.like(record.receipt_verification, { kind: 'download-completion', record_id: first.completion.recordId, issuer: svc.baseUrl });
    t.deepEqual(record.item.receipt, { jws: first.completion.receipt, note: 'kept verbatim' });
  }
});

test('tampered, foreign-key and client-asserted receipts read back without the field, never false, and are stored as sent', async (t) => {
  const { completion } = await downloadReceipt();
  const jwks = await svc.client().receipts.jwks();
  // Signed with a key svc never published, under svc's own kid and issuer: only the signature differs.
  const { privateKey } = await generateKeyPair('EdDSA');
  const [, payloadPart] = completion.receipt.split('.');
  const claims = JSON.parse(Buffer.from(payloadPart!, 'base64url').toString('utf8'));
  const foreign = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'svc-receipt+jwt', kid: jwks.keys[0]!.kid }).sign(privateKey);
  const unknownKid = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'svc-receipt+jwt', kid: 'someone-elses-key' }).sign(privateKey);
  const cases: Array<[string, Record<string, unknown>]> = [
    ['tampered', { receipt: { jws: tamper(completion.receipt) } }],
    ['foreign key', { receipt: { jws: foreign } }],
    ['unknown key', { receipt: { jws: unknownKid } }],
    ['client-sent flag', { receipt_verified: true, receipt: { said: 'trust me' } }],
  ];
  for (const [name, value] of cases) {
    for (const record of await postAndReadBack(`receipts:${name.replace(/ /g, '-')}`, value)) {
      t.false('receipt_verified' in record, name);
      t.false('receipt_verification' in record, name);
      for (const [field, sent] of Object.entries(value)) t.deepEqual(record.item[field], sent, `${name}: ${field} stored as sent`);
    }
  }
  // Offline verification agrees: the foreign and tampered receipts fail there too.
  for (const jws of [tamper(completion.receipt), foreign]) {
    const error = await t.throwsAsync(verifyReceipt(jws, { keys: jwks, issuer: svc.baseUrl }));
    t.true(ReceiptVerificationError.isInstance(error));
    t.is((error as ReceiptVerificationError).check, 'signature');
  }
  const unknown = await t.throwsAsync(verifyReceipt(unknownKid, { keys: jwks, issuer: svc.baseUrl }));
  t.is((unknown as ReceiptVerificationError).check, 'key');
  t.is((unknown as ReceiptVerificationError).code, 'receipt_key_invalid');
  t.is((await verifyReceipt(completion.receipt, { keys: jwks, issuer: svc.baseUrl })).claims.record_id, completion.recordId);
  const otherIssuer = await t.throwsAsync(verifyReceipt(completion.receipt, { keys: jwks, issuer: 'https://other.example' }));
  t.is((otherIssuer as ReceiptVerificationError).check, 'issuer');
});

test('a receipt of a record that no longer exists reads back without the field, though its signature still verifies offline', async (t) => {
  // A caller of its own: another caller's pull of these bytes is another record, left alone.
  const { completion } = await downloadReceipt(
    'tickets.csv',
    svc.client({ token: 'forgetful-bearer', storagePolicy: { hosts: [new URL(svc.apiUrl).host], allowHttpLoopback: true } }),
  );
  // Records are never deleted through the API; an operator removing the row is what "gone" means.
  await svc.server.database.sequelize.query('DELETE FROM catalog_pulls WHERE id = :id', { replacements: { id: completion.recordId } });
  for (const record of await postAndReadBack('receipts:gone', { receipt: { jws: completion.receipt } })) t.false('receipt_verified' in record);
  const keys = await svc.client().receipts.jwks();
  t.is((await verifyReceipt(completion.receipt, { keys, issuer: svc.baseUrl })).claims.kind, 'download-completion');
});

test('developer-key lifecycle receipts are signed, stable on repeat, and verify on the board', async (t) => {
  const { client } = await signInAgent(svc, 'models:read');
  const created = await createKey(client, ['models:read']);
  const keys = await svc.client().receipts.jwks();
  const { claims } = await client.receipts.verify(created.receipt.signed_receipt);
  t.like(claims, { kind: 'developer-key-event', record_id: created.receipt.receipt_id });
  t.like(claims.facts, { credential_id: created.credential.credential_id, event: 'created', scopes: ['models:read'] });
  t.false('name' in claims.facts, 'the key name is not in a receipt that may be shown in public');

  const revoked = await client.credentials.revoke({ params: { credential_id: created.credential.credential_id } });
  const revokedAgain = await client.credentials.revoke({ params: { credential_id: created.credential.credential_id } });
  t.is(revokedAgain.receipt.signed_receipt, revoked.receipt.signed_receipt);
  const listed = await client.credentials.receipts({ params: { credential_id: created.credential.credential_id } });
  t.deepEqual(
    listed.data.map((receipt) => receipt.signed_receipt),
    [created.receipt.signed_receipt, revoked.receipt.signed_receipt],
  );
  await verifyReceipt(revoked.receipt.signed_receipt, { keys, issuer: svc.baseUrl });

  const [put] = await postAndReadBack('receipts:key-event', { receipt: { jws: revoked.receipt.signed_receipt } });
  t.true(put!.receipt_verified);
  t.like(put!.receipt_verification, { kind: 'developer-key-event', record_id: revoked.receipt.receipt_id });
});

test("the verification is the server's own row, gone with its item", async (t) => {
  const { completion } = await downloadReceipt();
  const [put] = await postAndReadBack('receipts:row', { receipt: { jws: completion.receipt } });
  const count = async () =>
    (
      await svc.server.database.sequelize.query<{ n: number }>('SELECT count(*)::int AS n FROM blackboard_receipt_verifications WHERE item_id = :id', {
        replacements: { id: put!.id },
        type: QueryTypes.SELECT,
      })
    )[0]!.n;
  t.is(await count(), 1);
  await svc.server.database.sequelize.query('DELETE FROM blackboard_items WHERE id = :id', { replacements: { id: put!.id } });
  t.is(await count(), 0);
});

test('the MCP tool (official SDK client) puts and reads receipt_verified like REST', async (t) => {
  const { completion } = await downloadReceipt();
  const client = new Client({ name: 'svc-receipts-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.apiUrl}/api/mcp`)));
  try {
    const call = async (args: Record<string, unknown>) =>
      (await client.callTool({ name: 'blackboard', arguments: args })).structuredContent as Record<string, any>;
    const verified = await call({ op: 'put', key: 'receipts:mcp', value: { text: 'via MCP', receipt: { jws: completion.receipt } } });
    t.true(verified.receipt_verified);
    const asserted = await call({ op: 'put', key: 'receipts:mcp', value: { text: 'trust me', receipt_verified: true } });
    t.false('receipt_verified' in asserted);
    const read = await call({ op: 'get', key: 'receipts:mcp' });
    const byId = new Map(read.items.map((item: BlackboardRecord) => [item.id, item]));
    t.like(byId.get(verified.id), { receipt_verified: true, receipt_verification: { kind: 'download-completion', record_id: completion.recordId } });
    t.false('receipt_verified' in (byId.get(asserted.id) as object));
    t.true((byId.get(asserted.id) as BlackboardRecord).item.receipt_verified as boolean, 'the sent flag stays an ordinary field of the value');
  } finally {
    await client.close();
  }
});
