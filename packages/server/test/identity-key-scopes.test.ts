import test from 'ava';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpContract, urlFor } from '@svc/schemas';
import { startTestServer, type TestServer } from '@svc/testing/test-server';
import { createKey, signInAgent } from '@svc/testing/identity';

/**
 * A session narrowed by refresh (scope=models:read) acts on its owner's developer keys only
 * within its own scopes: it must not mint, through rotation, a secret it could not create.
 */
let svc: TestServer;
test.before(async () => {
  svc = await startTestServer();
});
test.after.always(async () => {
  await svc?.close();
});

const WIDE = ['billing:write', 'jobs:write', 'inference:invoke'] as const;

async function wideKeyAndNarrowSession() {
  const { session, client: wide } = await signInAgent(svc, 'models:read billing:write jobs:write inference:invoke');
  const key = await createKey(wide, [...WIDE], 'wide');
  const narrowed = await svc.client().oauth.refresh({ refreshToken: session.refreshToken!, clientId: session.clientId, scope: 'models:read' });
  const narrow = svc.client({ token: narrowed.accessToken });
  const me = await narrow.oauth.whoami();
  if (me.scopes.join(' ') !== 'models:read') throw new Error(`the refresh did not narrow: ${me.scopes.join(' ')}`);
  return { wide, narrow, key, narrowToken: narrowed.accessToken };
}

const codeOf = async (promise: Promise<unknown>) => {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    return `${(error as { status?: number }).status} ${(error as { code?: string }).code}`;
  }
};

test('a narrowed token can neither create nor rotate a key wider than itself', async (t) => {
  const { narrow, key } = await wideKeyAndNarrowSession();
  t.is(await codeOf(createKey(narrow, ['billing:write'])), '403 scope_not_held');
  t.is(await codeOf(narrow.credentials.rotate({ params: { credential_id: key.credential.credential_id } })), '403 scope_not_held');
  // The refused rotation changed nothing: the wide key still works and is still the active one.
  t.deepEqual((await svc.client({ token: key.secret }).oauth.whoami()).scopes, [...WIDE]);
});

test('a narrowed token cannot revoke a key wider than itself, but may list keys and read receipts', async (t) => {
  const { narrow, key } = await wideKeyAndNarrowSession();
  const id = key.credential.credential_id;
  t.is(await codeOf(narrow.credentials.revoke({ params: { credential_id: id } })), '403 scope_not_held');
  t.truthy(await svc.client({ token: key.secret }).oauth.whoami(), 'the key survived the refused revoke');
  // Metadata holds no secret, so reading it grants nothing.
  t.true((await narrow.credentials.list()).data.some((credential) => credential.credential_id === id));
  t.is((await narrow.credentials.receipts({ params: { credential_id: id } })).data[0]!.event, 'created');
});

test('a token holding every scope of the key rotates and revokes it as before', async (t) => {
  const { wide, key } = await wideKeyAndNarrowSession();
  const rotated = await wide.credentials.rotate({ params: { credential_id: key.credential.credential_id } });
  t.deepEqual(rotated.credential.scopes, [...WIDE]);
  const revoked = await wide.credentials.revoke({ params: { credential_id: rotated.credential.credential_id } });
  t.is(revoked.status, 'revoked');
});

test('a narrow token may rotate and revoke a key within its scopes', async (t) => {
  const { session, client: wide } = await signInAgent(svc, 'models:read billing:write');
  const key = await createKey(wide, ['models:read'], 'narrow');
  const narrowed = await svc.client().oauth.refresh({ refreshToken: session.refreshToken!, clientId: session.clientId, scope: 'models:read' });
  const narrow = svc.client({ token: narrowed.accessToken });
  const rotated = await narrow.credentials.rotate({ params: { credential_id: key.credential.credential_id } });
  t.is((await narrow.credentials.revoke({ params: { credential_id: rotated.credential.credential_id } })).status, 'revoked');
});

test('a narrowed token cannot change the limits of a key wider than itself, over REST or through /mcp', async (t) => {
  const { wide, narrow, key, narrowToken } = await wideKeyAndNarrowSession();
  const id = key.credential.credential_id;
  await wide.credentials.update({ params: { credential_id: id }, body: { limits: { credits_per_day: 0 } } });
  const raise = { limits: { credits_per_day: 100_000_000 } };
  t.is(await codeOf(narrow.credentials.update({ params: { credential_id: id }, body: raise })), '403 scope_not_held');

  // The same change as an MCP tool call, through the official SDK client with the narrowed token.
  const mcp = new McpClient({ name: 'svc-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(urlFor(svc.server.urls(), mcpContract.endpoint)), {
      requestInit: { headers: { authorization: `Bearer ${narrowToken}` } },
    }),
  );
  try {
    const called = await mcp.callTool({ name: 'credentials_update', arguments: { credential_id: id, ...raise } });
    t.true(called.isError);
    t.is((called.structuredContent as { code?: string }).code, 'scope_not_held');
  } finally {
    await mcp.close();
  }
  const [stored] = (await wide.credentials.list()).data.filter((credential) => credential.credential_id === id);
  t.is(stored!.limits.credits_per_day, 0, 'neither refused change reached the key');
  // The token that holds every scope of the key still changes it.
  t.is((await wide.credentials.update({ params: { credential_id: id }, body: raise })).limits.credits_per_day, 100_000_000);
});
