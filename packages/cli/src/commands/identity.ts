import type { Command } from 'commander';
import { createClient, DEFAULT_LOOPBACK_REDIRECT, SvcError } from '@svc/client';
import { withContext, type CliContext } from '../context.ts';
import { CliFailure, UsageError } from '../failure.ts';
import { loadSession, removeSession, saveSession, sessionFile } from '../session-store.ts';

/** `svc login`, `svc logout`, `svc whoami`. */
export function registerIdentityCommands(program: Command): void {
  program
    .command('login')
    .description('Sign in as an OAuth agent (authorization code + PKCE) and store the tokens in your config directory')
    .option('--scope <scopes>', 'space-separated scopes to ask for (default: every demo-tier scope)')
    .option('--force', 'replace an existing session of this server (its agent and keys stay, but you lose access to them)')
    .option('--with-token', 'read a developer key or token from standard input, check it with the server and store it (for CI and scripts)')
    .addHelpText('after', LOGIN_EXAMPLES)
    .action(
      withContext(async (cli, flags: { scope?: string; force?: boolean; withToken?: boolean }) => {
        if (cli.options.token) throw new CliFailure(`a token is set (${cli.options.tokenFrom}); \`svc login\` stores its own tokens, so unset it first.`);
        const baseUrl = cli.baseUrl();
        const existing = loadSession(baseUrl);
        if (existing && !flags.force) {
          throw new CliFailure(
            `already signed in to ${baseUrl} as ${existing.subject}; run \`svc logout\` first, or \`svc login --force\` (a new login is a new agent: the keys of ${existing.subject} stay with it)`,
          );
        }
        if (flags.withToken) {
          await loginWithToken(cli, baseUrl, flags.scope);
          return;
        }
        // The authorization endpoint approves at once, so the CLI reads the redirect itself:
        // no browser and no listener on the loopback redirect URI are needed.
        const session = await cli.client().oauth.login({ clientName: 'svc CLI', redirectUri: DEFAULT_LOOPBACK_REDIRECT, scope: flags.scope });
        const me = await createClient({ baseUrl, token: session.accessToken }).oauth.whoami();
        saveSession(baseUrl, { ...session, subject: me.id });
        cli.output.result(
          { server: baseUrl, agent: me.id, scopes: me.scopes, expires_at: new Date(session.expiresAt!).toISOString(), stored_in: sessionFile() },
          (data) => `Signed in to ${data.server} as ${data.agent}\nscopes: ${data.scopes.join(' ')}\ntokens stored in ${data.stored_in} (mode 0600)`,
        );
      }),
    );

  program
    .command('logout')
    .description('Revoke the stored session on the server (RFC 7009), then forget its tokens')
    .option('--local', 'forget the stored tokens without asking the server to revoke them (a server you cannot reach)')
    .action(
      withContext(async (cli, flags: { local?: boolean }) => {
        const baseUrl = cli.baseUrl();
        const session = loadSession(baseUrl);
        // A stored key is the user's to revoke (`svc keys revoke`): logging out only forgets it here.
        if (session && !flags.local && session.kind !== 'token') {
          try {
            await createClient({ baseUrl }).oauth.logout(session);
          } catch (error) {
            throw new CliFailure(
              `could not revoke the session on ${baseUrl}: ${(error as Error).message}; the stored tokens are kept (run \`svc logout --local\` to forget them anyway)`,
            );
          }
        }
        const removed = removeSession(baseUrl);
        cli.output.result({ server: baseUrl, signed_out: removed, revoked: removed && !flags.local && session?.kind !== 'token' }, (data) =>
          data.signed_out
            ? `Signed out of ${data.server}${data.revoked ? ' (tokens revoked on the server)' : session?.kind === 'token' ? ' (the stored key is forgotten here; it stays valid until `svc keys revoke`)' : ' (tokens forgotten here, not revoked)'}`
            : `Not signed in to ${data.server}`,
        );
      }),
    );

  program
    .command('whoami')
    .description('Show the principal, scopes and credential the server sees for you')
    .action(
      withContext(async (cli) => {
        const me = await cli.client().oauth.whoami();
        cli.output.result(me, (data) =>
          [
            `${data.kind} ${data.id}`,
            `credential: ${data.credential}${data.credential_id ? ` ${data.credential_id}` : ''}`,
            `scopes: ${data.scopes.join(' ') || '(none)'}`,
          ].join('\n'),
        );
      }),
    );
}

const LOGIN_EXAMPLES = `
Examples:
  $ svc login                                   # sign in as a new OAuth agent
  $ svc login --scope "models:read inference:invoke"
  $ echo "$SVC_KEY" | svc login --with-token    # store a developer key (CI, scripts)
  $ svc auth status                             # who you are, and where the credential comes from`;

/** `svc login --with-token`: the token comes from stdin (never an argument: shell history and `ps` would keep it). */
async function loginWithToken(cli: CliContext, baseUrl: string, scope: string | undefined): Promise<void> {
  if (scope !== undefined) throw new UsageError('--scope does not apply to --with-token: a developer key carries its own scopes');
  if (process.stdin.isTTY)
    throw new UsageError('--with-token reads the token from standard input: pipe it in, e.g. `echo "$SVC_KEY" | svc login --with-token`');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const token = Buffer.concat(chunks).toString('utf8').trim();
  if (token === '' || /\s/.test(token)) throw new UsageError('--with-token expects one token on standard input, with nothing else');
  let me: Awaited<ReturnType<ReturnType<typeof createClient>['oauth']['whoami']>>;
  try {
    me = await createClient({ baseUrl, token }).oauth.whoami();
  } catch (error) {
    throw new CliFailure(`${baseUrl} did not accept the token (${(error as { code?: string }).code ?? (error as Error).message}); nothing was stored`);
  }
  if (me.kind === 'anonymous') throw new CliFailure(`${baseUrl} did not accept the token; nothing was stored`);
  saveSession(baseUrl, { kind: 'token', accessToken: token, clientId: me.client_id ?? '', subject: me.id });
  cli.output.result(
    { server: baseUrl, principal: `${me.kind} ${me.id}`, credential: me.credential, scopes: me.scopes, stored_in: sessionFile() },
    (data) =>
      `Signed in to ${data.server} as ${data.principal} (${data.credential})\nscopes: ${data.scopes.join(' ') || '(none)'}\ntoken stored in ${data.stored_in} (mode 0600)`,
  );
}

/** `svc auth status`: which credential the CLI would send to this server, where it comes from, and what the server makes of it. */
export function registerAuthCommands(program: Command): void {
  const auth = program.command('auth').description('Your credential for this server: `svc auth status`');
  auth
    .command('status')
    .description('Show which credential svc sends to this server, where it comes from, and who the server says you are; exit 1 when it is refused')
    .addHelpText('after', '\nExamples:\n  $ svc auth status\n  $ svc auth status --json | jq .scopes')
    .action(
      withContext(async (cli) => {
        const baseUrl = cli.baseUrl();
        const stored = cli.options.token ? undefined : loadSession(baseUrl);
        const source = cli.options.token
          ? (cli.options.tokenFrom ?? '--token or SVC_TOKEN')
          : stored
            ? `${stored.kind === 'token' ? 'a stored token (svc login --with-token)' : 'a stored OAuth session (svc login)'} in ${sessionFile()}`
            : 'none';
        // A refused or missing credential is this command's answer, not its failure: it is reported as data.
        const me = await cli
          .client()
          .oauth.whoami()
          .catch((error: unknown) => {
            if (SvcError.isInstance(error) && error.status === 401) return undefined;
            throw error;
          });
        const signedIn = me !== undefined && me.kind !== 'anonymous';
        const status = {
          server: baseUrl,
          source,
          signed_in: signedIn,
          principal: signedIn ? `${me.kind} ${me.id}` : null,
          credential: me?.credential ?? (source === 'none' ? 'none' : 'refused'),
          scopes: me?.scopes ?? [],
          ...(stored?.expiresAt ? { access_token_expires_at: new Date(stored.expiresAt).toISOString() } : {}),
        };
        cli.output.result(status, (data) =>
          data.signed_in
            ? [
                `${data.server}: signed in as ${data.principal}`,
                `credential: ${data.credential}, from ${data.source}`,
                `scopes: ${data.scopes.join(' ') || '(none)'}`,
              ]
                .concat(data.access_token_expires_at ? [`access token expires ${data.access_token_expires_at} (refreshed as needed)`] : [])
                .join('\n')
            : data.credential === 'refused'
              ? `${data.server}: the credential from ${data.source} is refused; run \`svc logout\` and \`svc login\`, or pass another with --token or SVC_TOKEN`
              : `${data.server}: not signed in (no credential); run \`svc login\`, or pass a developer key with --token or SVC_TOKEN`,
        );
        if (!status.signed_in) throw new CliFailure('not signed in', { silent: true });
      }),
    );
}
