import type { CreditBalance, CreditUsageReceipt } from '@svc/schemas';
import { useEffect, useState } from 'preact/hooks';
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

/**
 * A purchase on its way through Stripe Checkout: what the balance was and what was bought, kept in
 * this tab for the round trip (no secret: amounts only), so the page can tell when the grant lands.
 */
const CHECKOUT_KEY = 'svc.console.checkout';
interface PendingCheckout {
  before: number;
  credits: number;
}
/** The webhook that grants the credits may come after the buyer is back: look again for up to about 30 s. */
const GRANT_WAITS_MS = [500, 1000, 2000, 4000, 8000, 15_000];

type Returned = { state: 'waiting'; credits: number } | { state: 'granted'; credits: number } | { state: 'late' } | { state: 'cancelled' };

/** Back from Checkout (`?checkout=success|cancelled`): clears the address, then waits for the webhook's grant. */
function useCheckoutReturn(onGranted: () => void): Returned | undefined {
  const [returned, setReturned] = useState<Returned | undefined>();
  useEffect(() => {
    const outcome = new URLSearchParams(location.search).get('checkout');
    if (outcome !== 'success' && outcome !== 'cancelled') return;
    history.replaceState(null, '', location.pathname);
    const pending = JSON.parse(sessionStorage.getItem(CHECKOUT_KEY) ?? 'null') as PendingCheckout | null;
    sessionStorage.removeItem(CHECKOUT_KEY);
    if (outcome === 'cancelled' || !pending) {
      setReturned(outcome === 'cancelled' ? { state: 'cancelled' } : undefined);
      return;
    }
    setReturned({ state: 'waiting', credits: pending.credits });
    const stop = new AbortController();
    void (async () => {
      const svc = await signedInClient();
      for (const wait of GRANT_WAITS_MS) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        if (stop.signal.aborted) return;
        const balance: CreditBalance = await svc.billing.balance(undefined, { signal: stop.signal });
        if (balance.spendable + balance.reserved >= pending.before + pending.credits) {
          setReturned({ state: 'granted', credits: pending.credits });
          onGranted();
          return;
        }
      }
      setReturned({ state: 'late' });
    })().catch(() => stop.signal.aborted || setReturned({ state: 'late' }));
    return () => stop.abort();
  }, []);
  return returned;
}

/** Credits: spendable and reserved, usage as a table and a chart of calls per day, the CSV export, and buying a pack. */
export function CreditsPage() {
  useTitle('Credits');
  const [failure, setFailure] = useState<unknown>();
  const [loaded, reload] = useLoad(async (signal) => {
    const svc = await signedInClient();
    const balance = await svc.billing.balance(undefined, { signal });
    const receipts: CreditUsageReceipt[] = [];
    for await (const receipt of svc.billing.usage.all({ query: { limit: 100 } }, { limit: SHOWN_RECEIPTS, signal }))
      receipts.push(receipt as CreditUsageReceipt);
    return { balance, receipts };
  }, []);
  const returned = useCheckoutReturn(reload);
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
  const buy = async (packCode: string, balance: CreditBalance) => {
    try {
      const svc = await signedInClient();
      // One idempotency key per click: a retried request answers the same Checkout Session. Checkout sends the buyer back here.
      const checkout = await svc.billing.checkout({
        body: { pack_code: packCode as never, return_to: 'console' },
        headers: { 'idempotency-key': crypto.randomUUID() },
      });
      const pending: PendingCheckout = { before: balance.spendable + balance.reserved, credits: checkout.credits };
      sessionStorage.setItem(CHECKOUT_KEY, JSON.stringify(pending));
      location.assign(checkout.url);
    } catch (error) {
      setFailure(error);
    }
  };
  return (
    <RequireSession>
      <h1>Credits</h1>
      {returned && (
        <p class="notice" role="status" data-testid="checkout-outcome">
          {returned.state === 'waiting' && `Paid. Waiting for Stripe to confirm the payment; ${returned.credits} credits are added when it does…`}
          {returned.state === 'granted' && `Payment confirmed: ${returned.credits} credits added.`}
          {returned.state === 'late' && 'Stripe has not confirmed the payment yet; the credits are added when it does. Reload this page later.'}
          {returned.state === 'cancelled' && 'Checkout was left without paying; nothing was charged.'}
        </p>
      )}
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
            {loaded.value.balance.can_buy ? (
              <ul class="packs">
                {loaded.value.balance.packs.map((pack) => (
                  <li key={pack.pack_code}>
                    <button type="button" onClick={() => buy(pack.pack_code, loaded.value.balance)}>
                      {pack.credits} credits for {(pack.amount / 100).toFixed(2)} {pack.currency.toUpperCase()}
                    </button>
                  </li>
                ))}
              </ul>
            ) : (
              <p class="notice" data-testid="billing-off">
                Buying credits is off on this server: its operator has not set up payments (Stripe).
              </p>
            )}
          </section>
          <section aria-labelledby="usage-heading">
            <h2 id="usage-heading">Usage</h2>
            <CallsPerDayChart days={perDay(loaded.value.receipts)} />
            <button type="button" onClick={exportCsv}>
              Export every receipt as CSV
            </button>
            <div class="table-wrap">
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
            </div>
          </section>
        </>
      )}
    </RequireSession>
  );
}
