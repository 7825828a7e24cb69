import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { verifyReceipt } from '@svc/client';
import { createTestDatabase } from '@svc/testing/test-database';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/** A loopback port free right now: the servers below take turns on it, so the issuer URL stays the same. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function completionReceipt(svc: TestServer): Promise<{ receipt: string; recordId: string }> {
  const client = svc.client({ token: 'rotation-bearer', storagePolicy: { hosts: [new URL(svc.apiUrl).host], allowHttpLoopback: true } });
  const directory = await mkdtemp(path.join(tmpdir(), 'svc-rotation-'));
  const file = await client.catalog.verifiedDownload({
    artifactId: 'support-tickets-sample',
    path: 'README.md',
    destination: path.join(directory, 'README.md'),
  });
  return file.completion;
}

const kidOf = (jws: string) => JSON.parse(Buffer.from(jws.split('.')[0]!, 'base64url').toString('utf8')).kid as string;

test('rotating the key (a new generation, then a new secret) keeps every earlier receipt verifiable, on the board and offline', async (t) => {
  const database = await createTestDatabase();
  const port = String(await freePort());
  const secret = 'rotation-test-secret-0123456789abcdef';
  const start = (env: Record<string, string>) =>
    startTestServer({ database, env: { SVC_PORT: port, SVC_CATALOG_DEMO: 'on', SVC_SIGNING_SECRET: secret, ...env } });
  try {
    const first = await start({});
    const old = await completionReceipt(first);
    const issuer = first.baseUrl;
    await first.close();

    const second = await start({ SVC_RECEIPT_KEY_GENERATION: '2' });
    const afterRotation = await second.client().receipts.jwks();
    t.is(afterRotation.keys.length, 2);
    t.not(afterRotation.keys[0]!.kid, kidOf(old.receipt), 'the new key comes first');
    t.true(
      afterRotation.keys.some((key) => key.kid === kidOf(old.receipt)),
      'the old key stays published',
    );
    // The same record, signed again now: same claims, the new key.
    const resigned = await completionReceipt(second);
    t.is(resigned.recordId, old.recordId);
    t.is(kidOf(resigned.receipt), afterRotation.keys[0]!.kid);
    const put = await second.client().blackboard.put({ body: { key: 'receipts:rotation', value: { text: 'old receipt', receipt: { jws: old.receipt } } } });
    t.true(put.receipt_verified);
    t.is(put.receipt_verification?.key_id, kidOf(old.receipt));
    await second.close();

    // A replaced secret: nothing derives the old keys any more, yet they stay published.
    const third = await start({ SVC_SIGNING_SECRET: 'an-entirely-new-secret-0123456789abcdef' });
    t.is(third.baseUrl, issuer);
    const keys = await third.client().receipts.jwks();
    t.is(keys.keys.length, 3);
    for (const receipt of [old.receipt, resigned.receipt]) {
      t.is((await verifyReceipt(receipt, { keys, issuer })).claims.record_id, old.recordId);
      const shown = await third.client().blackboard.put({ body: { key: 'receipts:rotation', value: { text: 'still good', receipt: { jws: receipt } } } });
      t.true(shown.receipt_verified);
    }
    await third.close();
  } finally {
    await database.drop();
  }
});

test("replicas sharing SVC_SIGNING_SECRET and SVC_PUBLIC_URL sign with one key and verify each other's receipts", async (t) => {
  const database = await createTestDatabase();
  const [portA, portB] = [await freePort(), await freePort()];
  // Behind a load balancer both answer to one public URL; here that is replica A's address.
  const env = { SVC_SIGNING_SECRET: 'replica-test-secret-0123456789abcdef', SVC_PUBLIC_URL: `http://127.0.0.1:${portA}` };
  const replicaA = await startTestServer({ database, env: { ...env, SVC_PORT: String(portA), SVC_CATALOG_DEMO: 'on' } });
  // The embedded database cannot be shared between two servers; there B has its own, and only the keys are compared.
  const shared = database.kind === 'postgres';
  const replicaB = await startTestServer({ database: shared ? database : undefined, env: { ...env, SVC_PORT: String(portB), SVC_CATALOG_DEMO: 'off' } });
  try {
    const clientB = replicaB.client({ baseUrl: `http://127.0.0.1:${portB}`, apiUrl: `http://127.0.0.1:${portB}` });
    const keysA = await replicaA.client().receipts.jwks();
    t.deepEqual(await clientB.receipts.jwks(), keysA);
    t.is(keysA.keys.length, 1);
    const { receipt, recordId } = await completionReceipt(replicaA);
    t.is((await clientB.receipts.verify(receipt, { issuer: env.SVC_PUBLIC_URL })).claims.record_id, recordId);
    if (shared) {
      const put = await clientB.blackboard.put({ body: { key: 'receipts:replicas', value: { text: 'from replica A', receipt: { jws: receipt } } } });
      t.true(put.receipt_verified);
    }
  } finally {
    await replicaA.close();
    await replicaB.close();
    await database.drop();
  }
});
