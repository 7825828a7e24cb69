import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { JsonWebKeySet } from '@svc/schemas';
import { ReceiptVerificationError, verifyReceipt } from '@svc/client';
import { withContext } from '../context.ts';
import { CliFailure } from '../failure.ts';
import { readReceipt } from '../receipt-input.ts';
import { jsonText } from '../terminal-safe.ts';

export function registerReceiptCommands(program: Command): void {
  program
    .command('verify')
    .description("Verify an svc receipt offline against the issuer's published keys (/.well-known/jwks.json, or --jwks FILE with no network at all)")
    .argument('<receipt|file>', 'the receipt (compact JWS), or a file holding it or a saved answer with it')
    .option('--jwks <file>', 'the published keys, saved before (`svc receipts keys > jwks.json`): nothing is fetched')
    .option('--issuer <url>', 'the issuer to expect (default: the base URL)')
    .action(
      withContext(async (cli, argument: string, flags: { jwks?: string; issuer?: string }) => {
        const receipt = await readReceipt(argument);
        const keys = flags.jwks ? JsonWebKeySet.parse(JSON.parse(await readFile(flags.jwks, 'utf8'))) : await cli.client().receipts.jwks();
        const issuer = flags.issuer ?? cli.baseUrl();
        try {
          const { claims, keyId } = await verifyReceipt(receipt, { keys, issuer });
          const result = {
            valid: true,
            kind: claims.kind,
            record_id: claims.record_id,
            issuer: claims.iss,
            issued_at: new Date(claims.iat * 1000).toISOString(),
            key_id: keyId,
            facts: claims.facts,
          };
          cli.output.result(result, (data) =>
            [
              `valid: ${data.kind} ${data.record_id}, issued by ${data.issuer} at ${data.issued_at} (key ${data.key_id})`,
              ...Object.entries(data.facts).map(([name, value]) => `  ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`),
            ].join('\n'),
          );
        } catch (error) {
          if (!ReceiptVerificationError.isInstance(error)) throw error;
          cli.output.result(
            { valid: false, check: error.check, code: error.code, message: error.message },
            (data) => `NOT VALID [${data.check}]: ${data.message}`,
          );
          throw new CliFailure(error.message, { silent: true });
        }
      }),
    );

  program
    .command('receipts')
    .description('Receipts svc signs')
    .command('keys')
    .description('Print the published receipt keys (JWKS), to keep for `svc verify --jwks`')
    .action(
      withContext(async (cli) => {
        const keys = await cli.client().receipts.jwks();
        // Always JSON: this output is the file `--jwks` reads.
        cli.output.stdout.write(`${jsonText(keys, 2)}\n`);
      }),
    );
}
