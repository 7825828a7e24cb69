import { Argument, type Command } from 'commander';
import { billingContract, PackCode, type CreditUsageReceipt, type StripeCreditUsagePage } from '@svc/schemas';
import { withContext } from '../context.ts';
import { fieldRule, requestFrom } from '../contract-flags.ts';
import { cursorListOptions, type CursorListFlags, listLimit, printList } from '../list-output.ts';
import { table } from '../output.ts';

const receiptRow = (receipt: CreditUsageReceipt) => [
  receipt.created_at,
  receipt.receipt_id,
  String(receipt.credits),
  receipt.model,
  String(receipt.usage.total_tokens),
  receipt.idempotency_key,
];

export function registerBillingCommands(program: Command): void {
  const billing = program.command('billing').description('Prepaid credits: balance, buying a pack, usage receipts');

  billing
    .command('balance')
    .description('Spendable and reserved credits, and the packs on offer')
    .action(
      withContext(async (cli) => {
        const balance = await cli.client().billing.balance();
        cli.output.result(balance, (data) =>
          [
            `spendable ${data.spendable}`,
            `reserved  ${data.reserved}`,
            '',
            table([
              ['PACK', 'CREDITS', 'PRICE'],
              ...data.packs.map((pack) => [pack.pack_code, String(pack.credits), `${(pack.amount / 100).toFixed(2)} ${pack.currency.toUpperCase()}`]),
            ]),
          ].join('\n'),
        );
      }),
    );

  billing
    .command('buy')
    .description('Start buying a credit pack: prints the checkout URL to pay at')
    .addArgument(new Argument('<pack>', 'the pack').choices(PackCode.options))
    .option('--idempotency-key <key>', 'answer the same checkout when run again with this key')
    .action(
      withContext(async (cli, pack: PackCode, flags: { idempotencyKey?: string }) => {
        const session = await cli.client().billing.checkout({ body: { pack_code: pack }, headers: { 'idempotency-key': flags.idempotencyKey } });
        cli.output.result(session, (data) => data.url);
        if (!cli.output.json) cli.output.notice(`${data(session)}: pay at the URL; the credits arrive when the payment is confirmed (svc billing balance).`);
      }),
    );

  cursorListOptions(
    billing
      .command('usage')
      .description('Credit usage receipts, newest first')
      .option('--csv', 'print CSV (RFC 4180, header row); with --all every receipt, streamed'),
    billingContract.usage,
    'receipts',
  ).action(
    withContext(async (cli, flags: CursorListFlags & { csv?: boolean }) => {
      const client = cli.client();
      const limit = listLimit(billingContract.usage, 'query', flags);
      const query = (pageSize: number | undefined) => requestFrom(billingContract.usage, 'query', { limit: pageSize, cursor: flags.cursor || undefined });
      if (flags.csv) {
        // With --all the server streams every receipt (the client's page size); without, one page of the route's size.
        const pageSize = flags.all ? undefined : (limit ?? (fieldRule(billingContract.usage, 'query', 'limit').fallback as number));
        await client.billing.exportUsageCsv(cli.output.stdout, { all: Boolean(flags.all), limit: pageSize, ...(flags.cursor ? { cursor: flags.cursor } : {}) });
        return;
      }
      await printList(
        cli,
        { all: flags.all, limit },
        {
          page: async (pageSize) => (await client.billing.usage({ query: query(pageSize) })) as StripeCreditUsagePage,
          all: (total) => client.billing.usage.all({ query: query(undefined) }, { limit: total }) as AsyncIterable<CreditUsageReceipt>,
          renderPage: (page) =>
            page.data.length
              ? table([['CREATED', 'RECEIPT', 'CREDITS', 'MODEL', 'TOKENS', 'IDEMPOTENCY KEY'], ...page.data.map(receiptRow)]) +
                (page.next_cursor ? `\n(more: --cursor ${page.next_cursor})` : '')
              : '(no receipts)',
          renderItem: (receipt) => receiptRow(receipt).join('  '),
        },
      );
    }),
  );
}

const data = (session: { pack_code: string; credits: number; replayed: boolean }) =>
  `${session.replayed ? 'existing checkout' : 'checkout'} for ${session.pack_code} (${session.credits} credits)`;
