import type { Command } from 'commander';
import { developerKeysContract, type KeyWebhook } from '@svc/schemas';
import { withContext } from '../context.ts';
import { requestFrom } from '../contract-flags.ts';

const describe = (webhook: KeyWebhook) => `${webhook.credential_id} announces its background responses at ${webhook.url} (since ${webhook.created_at})`;

/**
 * `svc keys webhook set|show|remove`: a key's own webhook endpoint (PUT/GET/DELETE
 * /v1/developer/credentials/{id}/webhook), where its background responses are announced.
 */
export function registerKeysWebhookCommands(keys: Command): void {
  const webhook = keys.command('webhook').description("A key's own webhook endpoint: its background responses are announced there, signed with its own secret");

  webhook
    .command('set')
    .description('Set (or move) the endpoint; a new signing secret is printed once')
    .argument('<credential_id>')
    .requiredOption('--url <https-url>', 'the https endpoint (its host must resolve to public addresses only)')
    .action(
      withContext(async (cli, credentialId: string, flags: { url: string }) => {
        // Checked against the contract before the call: a URL that is not https exits 2 naming --url.
        const body = requestFrom(developerKeysContract.setWebhook, 'body', { url: flags.url });
        const answer = await cli.client().developerKeys.setWebhook({ params: { credential_id: credentialId }, body });
        cli.output.result(answer, (data) => `${describe(data)}\n${data.secret}`);
        cli.output.notice(
          "This signing secret is shown once and cannot be read again: store it now (verify deliveries with it, e.g. openai's client.webhooks.unwrap).",
        );
      }),
    );

  webhook
    .command('show')
    .description("The key's endpoint (never its secret)")
    .argument('<credential_id>')
    .action(
      withContext(async (cli, credentialId: string) => {
        cli.output.result(await cli.client().developerKeys.webhook({ params: { credential_id: credentialId } }), describe);
      }),
    );

  webhook
    .command('remove')
    .description("Remove the key's endpoint (repeating it is harmless)")
    .argument('<credential_id>')
    .action(
      withContext(async (cli, credentialId: string) => {
        const answer = await cli.client().developerKeys.removeWebhook({ params: { credential_id: credentialId } });
        cli.output.result(answer, (data) => (data.deleted ? `${data.credential_id}: webhook removed` : `${data.credential_id} had no webhook`));
      }),
    );
}
