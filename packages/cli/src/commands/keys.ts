import type { Command } from 'commander';
import {
  developerKeysContract,
  scopes as allScopes,
  type DeveloperCredential,
  type DeveloperCredentialReceipt,
  type DeveloperCredentialSecretResponse,
  type KeyUsageRow,
  type Scope,
} from '@svc/schemas';
import { withContext, type CliContext } from '../context.ts';
import { UsageError } from '../failure.ts';
import { requestFrom } from '../contract-flags.ts';
import { cursorListOptions, type CursorListFlags, printCursorList } from '../list-output.ts';

function parseScopes(values: string[]): Scope[] {
  const list = values.flatMap((value) => value.split(/[\s,]+/)).filter(Boolean);
  const unknown = list.filter((scope) => !(allScopes as readonly string[]).includes(scope));
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}; scopes: ${allScopes.join(', ')}`);
  if (list.length === 0) throw new UsageError(`give at least one --scope (${allScopes.join(', ')})`);
  return [...new Set(list)] as Scope[];
}

/** The secret goes to stdout exactly once; the reminder to stderr so a pipe gets only data. */
function printSecret(cli: CliContext, data: DeveloperCredentialSecretResponse, verb: string): void {
  cli.output.result(
    data,
    (result) => `${verb} ${result.credential.credential_id} "${result.credential.name}" scopes ${result.credential.scopes.join(' ')}\n${result.secret}`,
  );
  cli.output.notice('This secret is shown once and cannot be read again: store it now.');
}

const row = (key: DeveloperCredential) => [key.credential_id, key.status, key.name, key.scopes.join(' '), key.created_at];
/** The operator's view adds whose key it is, when it ends, when it was last used and what it spent. */
const everyoneRow = (key: DeveloperCredential) => [
  key.credential_id,
  key.status,
  key.name,
  key.owner,
  key.expires_at ?? 'never',
  key.last_used_at ?? 'never',
  String(key.spent_credits),
];
const usageRow = (usage: KeyUsageRow) => [usage.day, usage.model, String(usage.requests), String(usage.total_tokens), String(usage.credits)];
const receiptRow = (receipt: DeveloperCredentialReceipt) => [receipt.receipt_id, receipt.event, receipt.occurred_at, receipt.related_credential_id ?? '-'];

/** `svc keys create|list|rotate|revoke|receipts`: developer keys of the signed-in agent. */
export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('Developer API keys of your OAuth agent (needs `svc login` or an OAuth bearer)');

  keys
    .command('create')
    .description('Issue a developer key; its secret is printed once')
    .requiredOption('--name <name>', 'a label for the key')
    .option('--scope <scope...>', `scopes (repeat or comma-separate): ${allScopes.join(', ')}`, [])
    .option('--expires-in-days <days>', 'the key stops working by itself after this many days (default: never)')
    .action(
      withContext(async (cli, flags: { name: string; scope: string[]; expiresInDays?: string }) => {
        const body = requestFrom(
          developerKeysContract.create,
          'body',
          { name: flags.name, scopes: parseScopes(flags.scope), expires_in_days: flags.expiresInDays },
          { expires_in_days: '--expires-in-days' },
        );
        printSecret(cli, await cli.client().developerKeys.create({ body }), 'Created');
      }),
    );

  cursorListOptions(
    keys
      .command('list')
      .description("Your keys (never their secrets), newest first; the operator token with --everyone: every owner's, with last use and spend")
      .option('--search <text>', 'only keys whose name, id or owner holds this text'),
    developerKeysContract.list,
    'keys',
  ).action(
    withContext(async (cli, flags: CursorListFlags & { search?: string }) => {
      await printCursorList(cli, developerKeysContract.list, flags, {
        method: cli.client().developerKeys.list,
        filters: { q: flags.search },
        flagNames: { q: '--search' },
        header: flags.everyone ? ['ID', 'STATUS', 'NAME', 'OWNER', 'EXPIRES', 'LAST USED', 'SPENT'] : ['ID', 'STATUS', 'NAME', 'SCOPES', 'CREATED'],
        row: flags.everyone ? everyoneRow : row,
        empty: 'No developer keys.',
      });
    }),
  );

  keys
    .command('rotate')
    .description('Replace a key: the old one stops working now, the new secret is printed once')
    .argument('<credential_id>')
    .action(
      withContext(async (cli, credentialId: string) => {
        printSecret(cli, await cli.client().developerKeys.rotate({ params: { credential_id: credentialId } }), 'Rotated into');
      }),
    );

  keys
    .command('revoke')
    .description('Revoke a key at once (repeating it is harmless)')
    .argument('<credential_id>')
    .action(
      withContext(async (cli, credentialId: string) => {
        const result = await cli.client().developerKeys.revoke({ params: { credential_id: credentialId } });
        cli.output.result(result, (data) => `${data.credential_id} ${data.status} at ${data.revoked_at} (receipt ${data.receipt.receipt_id})`);
      }),
    );

  cursorListOptions(
    keys.command('receipts').description('Lifecycle receipts of a key, oldest first').argument('<credential_id>'),
    developerKeysContract.receipts,
    'receipts',
  ).action(
    withContext(async (cli, credentialId: string, flags: CursorListFlags) => {
      await printCursorList(cli, developerKeysContract.receipts, flags, {
        method: cli.client().developerKeys.receipts,
        params: { credential_id: credentialId },
        header: ['RECEIPT', 'EVENT', 'AT', 'RELATED'],
        row: receiptRow,
      });
    }),
  );

  cursorListOptions(
    keys
      .command('usage')
      .description('What a key used per UTC day and model (calls, upstream tokens, credits), newest day first; the operator token reads any key')
      .argument('<credential_id>'),
    developerKeysContract.usage,
    'rows',
  ).action(
    withContext(async (cli, credentialId: string, flags: CursorListFlags) => {
      await printCursorList(cli, developerKeysContract.usage, flags, {
        method: cli.client().developerKeys.usage,
        params: { credential_id: credentialId },
        header: ['DAY', 'MODEL', 'REQUESTS', 'TOKENS', 'CREDITS'],
        row: usageRow,
        empty: 'No usage recorded.',
      });
    }),
  );
}
