import type { CreditUsageReceipt } from '@svc/schemas';
import { useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { useLoad, useTitle } from '../../hooks.ts';
import { signedInClient } from '../../signed-in.ts';
import { RequireSession } from './require-session.tsx';
import { CallsPerDayChart } from './usage-chart.tsx';

/** Receipts read for the table and chart; the CSV export has every one. */
const SHOWN_RECEIPTS = 500;

const perDay = (receipts: CreditUsageReceipt[]) => {
  const counts = new Map<string, number>();
  for (const receipt of receipts) counts.set(receipt.created_at.slice(0, 10), (counts.get(receipt.created_at.slice(0, 10)) ?? 0) + 1);
  return [...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([day, calls]) => ({ day, calls }));
};

/** Credits: spendable and reserved, usage as a table and a chart of calls per day, the CSV export, and buying a pack. */
export function CreditsPage() {
  useTitle('Credits');
  const [failure, setFailure] = useState<unknown>();
  const [loaded] = useLoad(async (signal) => {
    const svc = await signedInClient();
    const balance = await svc.billing.balance(undefined, { signal });
    const receipts: CreditUsageReceipt[] = [];
    for await (const receipt of svc.billing.usage.all({ query: { limit: 100 } }, { limit: SHOWN_RECEIPTS, signal }))
      receipts.push(receipt as CreditUsageReceipt);
    return { balance, receipts };
  }, []);
  const exportCsv = async () => {
    try {
      const svc = await signedInClient();
      const parts: Uint8Array[] = [];
      await svc.billing.exportUsageCsv(new WritableStream({ write: (chunk) => void parts.push(chunk) }));
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob(parts as BlobPart[], { type: 'text/csv' }));
      link.download = 'svc-credit-usage.csv';
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    } catch (error) {
      setFailure(error);
    }
  };
  const buy = async (packCode: string) => {
    try {
      const svc = await signedInClient();
      // One idempotency key per click: a retried request answers the same Checkout Session.
      const checkout = await svc.billing.checkout({ body: { pack_code: packCode as never }, headers: { 'idempotency-key': crypto.randomUUID() } });
      location.assign(checkout.url);
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <RequireSession>
      <h1>Credits</h1>
      {failure !== undefined && <ErrorNote error={failure} />}
      {loaded.state === 'loading' && <p>Loading…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <>
          <p class="balance">
            <span data-testid="spendable">{loaded.value.balance.spendable}</span> credits spendable, {loaded.value.balance.reserved} reserved by calls in
            flight.
          </p>
          <section class="panel" aria-labelledby="buy-heading">
            <h2 id="buy-heading">Buy credits</h2>
            <ul class="row">
              {loaded.value.balance.packs.map((pack) => (
                <li key={pack.pack_code}>
                  <button type="button" onClick={() => buy(pack.pack_code)}>
                    {pack.credits} credits for {(pack.amount / 100).toFixed(2)} {pack.currency.toUpperCase()}
                  </button>
                </li>
              ))}
            </ul>
          </section>
          <section aria-labelledby="usage-heading">
            <h2 id="usage-heading">Usage</h2>
            <CallsPerDayChart days={perDay(loaded.value.receipts)} />
            <button type="button" onClick={exportCsv}>
              Export every receipt as CSV
            </button>
            <table class="usage">
              <caption>Usage receipts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Operation</th>
                  <th scope="col">Model</th>
                  <th scope="col">Credits</th>
                </tr>
              </thead>
              <tbody>
                {loaded.value.receipts.map((receipt) => (
                  <tr key={receipt.receipt_id}>
                    <td>
                      <time dateTime={receipt.created_at}>{new Date(receipt.created_at).toLocaleString()}</time>
                    </td>
                    <td>{receipt.operation}</td>
                    <td>{receipt.model}</td>
                    <td>{receipt.credits}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </>
      )}
    </RequireSession>
  );
}
