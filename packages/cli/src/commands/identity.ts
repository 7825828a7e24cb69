import type { Command } from 'commander';
import { createClient, DEFAULT_LOOPBACK_REDIRECT } from '@svc/client';
import { withContext } from '../context.ts';
import { CliFailure } from '../failure.ts';
import { loadSession, removeSession, saveSession, sessionFile } from '../session-store.ts';

/** `svc login`, `svc logout`, `svc whoami`. */
export function registerIdentityCommands(program: Command): void {
  program
    .command('login')
    .description('Sign in as an OAuth agent (authorization code + PKCE) and store the tokens in your config directory')
    .option('--scope <scopes>', 'space-separated scopes to ask for (default: every demo-tier scope)')
    .option('--force', 'replace an existing session of this server (its agent and keys stay, but you lose access to them)')
    .action(
      withContext(async (cli, flags: { scope?: string; force?: boolean }) => {
        if (cli.options.token) throw new CliFailure('--token / SVC_TOKEN is set; `svc login` stores its own tokens, so unset it first.');
        const baseUrl = cli.baseUrl();
        const existing = loadSession(baseUrl);
        if (existing && !flags.force) {
          throw new CliFailure(
            `already signed in to ${baseUrl} as ${existing.subject}; run \`svc logout\` first, or \`svc login --force\` (a new login is a new agent: the keys of ${existing.subject} stay with it)`,
          );
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
        if (session && !flags.local) {
          try {
            await createClient({ baseUrl }).oauth.logout(session);
          } catch (error) {
            throw new CliFailure(
              `could not revoke the session on ${baseUrl}: ${(error as Error).message}; the stored tokens are kept (run \`svc logout --local\` to forget them anyway)`,
            );
          }
        }
        const removed = removeSession(baseUrl);
        cli.output.result({ server: baseUrl, signed_out: removed, revoked: removed && !flags.local }, (data) =>
          data.signed_out
            ? `Signed out of ${data.server}${data.revoked ? ' (tokens revoked on the server)' : ' (tokens forgotten here, not revoked)'}`
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
