import type { Command } from 'commander';
import { scopes as allScopes, type DeveloperCredential, type DeveloperCredentialReceipt, type DeveloperCredentialSecretResponse, type Scope } from '@svc/schemas';
import { withContext, type CliContext } from '../context.ts';
import { UsageError } from '../failure.ts';
import { allOption, printList } from '../list-output.ts';
import { table } from '../output.ts';

function parseScopes(values: string[]): Scope[] {
  const list = values.flatMap((value) => value.split(/[\s,]+/)).filter(Boolean);
  const unknown = list.filter((scope) => !(allScopes as readonly string[]).includes(scope));
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}; scopes: ${allScopes.join(', ')}`);
  if (list.length === 0) throw new UsageError(`give at least one --scope (${allScopes.join(', ')})`);
  return [...new Set(list)] as Scope[];
}

/** A page holds 1..100 keys; with --all, --limit counts items over every page, so only its floor holds. */
function parseLimit(value: string | undefined, all: boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || (!all && Number(value) > 100)) throw new UsageError(all ? '--limit must be a whole number of 1 or more' : '--limit must be an integer from 1 to 100 (with --all, any number of 1 or more)');
  return Number(value);
}

/** The secret goes to stdout exactly once; the reminder to stderr so a pipe gets only data. */
function printSecret(cli: CliContext, data: DeveloperCredentialSecretResponse, verb: string): void {
  cli.output.result(data, (result) => `${verb} ${result.credential.credential_id} "${result.credential.name}" scopes ${result.credential.scopes.join(' ')}\n${result.secret}`);
  cli.output.notice('This secret is shown once and cannot be read again: store it now.');
}

const row = (key: DeveloperCredential) => [key.credential_id, key.status, key.name, key.scopes.join(' '), key.created_at];
const receiptRow = (receipt: DeveloperCredentialReceipt) => [receipt.receipt_id, receipt.event, receipt.occurred_at, receipt.related_credential_id ?? '-'];

/** `svc keys create|list|rotate|revoke|receipts`: developer keys of the signed-in agent. */
export function registerKeysCommands(program: Command): void {
  const keys = program.command('keys').description('Developer API keys of your OAuth agent (needs `svc login` or an OAuth bearer)');

  keys
    .command('create')
    .description('Issue a developer key; its secret is printed once')
    .requiredOption('--name <name>', 'a label for the key')
    .option('--scope <scope...>', `scopes (repeat or comma-separate): ${allScopes.join(', ')}`, [])
    .action(
      withContext(async (cli, flags: { name: string; scope: string[] }) => {
        printSecret(cli, await cli.client().credentials.create({ body: { name: flags.name, scopes: parseScopes(flags.scope) } }), 'Created');
      }),
    );

  allOption(
    keys
      .command('list')
      .description('Your keys (never their secrets), newest first')
      .option('--limit <n>', 'page size, 1..100 (default 50); with --all, the most keys in total')
      .option('--cursor <cursor>', 'continue from a previous page'),
  ).action(
    withContext(async (cli, flags: { limit?: string; cursor?: string; all?: boolean }) => {
      const credentials = cli.client().credentials;
      await printList(cli, { all: flags.all, limit: parseLimit(flags.limit, flags.all) }, {
        page: (pageSize) => credentials.list({ query: { limit: pageSize, cursor: flags.cursor } }),
        all: (total) => credentials.list.all({ query: { cursor: flags.cursor } }, { limit: total }),
        renderPage: (data) => {
          if (data.data.length === 0) return 'No developer keys.';
          const lines = table([['ID', 'STATUS', 'NAME', 'SCOPES', 'CREATED'], ...data.data.map(row)]);
          return data.next_cursor ? `${lines}\nmore: --cursor ${data.next_cursor} (or --all)` : lines;
        },
        renderItem: (key) => row(key).join('  '),
      });
    }),
  );

  keys
    .command('rotate')
    .description('Replace a key: the old one stops working now, the new secret is printed once')
    .argument('<credential_id>')
    .action(
      withContext(async (cli, credentialId: string) => {
        printSecret(cli, await cli.client().credentials.rotate({ params: { credential_id: credentialId } }), 'Rotated into');
      }),
    );

  keys
    .command('revoke')
    .description('Revoke a key at once (repeating it is harmless)')
    .argument('<credential_id>')
    .action(
      withContext(async (cli, credentialId: string) => {
        const result = await cli.client().credentials.revoke({ params: { credential_id: credentialId } });
        cli.output.result(result, (data) => `${data.credential_id} ${data.status} at ${data.revoked_at} (receipt ${data.receipt.receipt_id})`);
      }),
    );

  allOption(
    keys
      .command('receipts')
      .description('Lifecycle receipts of a key, oldest first')
      .argument('<credential_id>')
      .option('--limit <n>', 'page size, 1..100 (default 50); with --all, the most receipts in total')
      .option('--cursor <cursor>', 'continue from a previous page'),
  ).action(
    withContext(async (cli, credentialId: string, flags: { limit?: string; cursor?: string; all?: boolean }) => {
      const credentials = cli.client().credentials;
      const params = { credential_id: credentialId };
      await printList(cli, { all: flags.all, limit: parseLimit(flags.limit, flags.all) }, {
        page: (pageSize) => credentials.receipts({ params, query: { limit: pageSize, cursor: flags.cursor } }),
        all: (total) => credentials.receipts.all({ params, query: { cursor: flags.cursor } }, { limit: total }),
        renderPage: (data) => {
          const lines = table([['RECEIPT', 'EVENT', 'AT', 'RELATED'], ...data.data.map(receiptRow)]);
          return data.next_cursor ? `${lines}\nmore: --cursor ${data.next_cursor} (or --all)` : lines;
        },
        renderItem: (receipt) => receiptRow(receipt).join('  '),
      });
    }),
  );
}
