import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Stripe's API (it cannot be reached from here), speaking its wire format
 * for what svc calls: `POST /v1/checkout/sessions` with a form-encoded body and an optional
 * `Idempotency-Key` (the same key answers the same object, as Stripe does), answering a
 * `checkout.session` object; errors in Stripe's `{ error: { type, message } }` shape.
 *
 * It also plays the hosted Checkout page a buyer's browser is sent to (the session's `url`,
 * `/c/pay/<id>`): a form whose Pay button marks the session paid, answers 303 to its
 * `success_url`, and then (as Stripe does, after the redirect) delivers the signed
 * `checkout.session.completed` event to the endpoint set by `deliverWebhooksTo`.
 */
export interface FakeStripe {
  url: string;
  /** Every create request as Stripe would see it: the flattened form fields and the headers. */
  requests: Array<{ form: Record<string, string>; idempotencyKey: string | undefined; authorization: string | undefined }>;
  /** Make creates whose Idempotency-Key ends with `keySuffix` answer this HTTP status with a Stripe error, `times` times. */
  failFor(keySuffix: string, status: number, times: number): void;
  /** Where the hosted page delivers events once a session is paid, signed as Stripe signs them (`Stripe-Signature: t=...,v1=...`). */
  deliverWebhooksTo(url: string, secret: string): void;
  /** Each event delivered from the hosted page, with the status the endpoint answered. */
  deliveries: Array<{ type: string; sessionId: string; status: number }>;
  close(): Promise<void>;
}

/** Stripe's signature scheme: HMAC-SHA256 of `<timestamp>.<payload>` under the endpoint's secret. */
export function stripeSignature(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex')}`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

async function readForm(request: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: FakeStripe['requests'] = [];
  const byKey = new Map<string, string>();
  const failures = new Map<string, { status: number; left: number }>();
  const sessions = new Map<string, Record<string, unknown>>();
  const deliveries: FakeStripe['deliveries'] = [];
  let webhook: { url: string; secret: string } | undefined;
  let baseUrl = '';

  const deliver = async (session: Record<string, unknown>) => {
    if (!webhook) return;
    const event = {
      id: `evt_${randomBytes(12).toString('hex')}`,
      object: 'event',
      type: 'checkout.session.completed',
      api_version: '2026-01-01',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      data: { object: session },
    };
    const payload = JSON.stringify(event);
    const answer = await fetch(webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(payload, webhook.secret) },
      body: payload,
    });
    await answer.arrayBuffer();
    deliveries.push({ type: event.type, sessionId: String(session.id), status: answer.status });
  };

  /** The hosted Checkout page: GET shows the amount and a Pay button; POST pays, redirects, then delivers the event. */
  const hostedPage = (request: IncomingMessage, response: import('node:http').ServerResponse, id: string) => {
    const session = sessions.get(id);
    if (!session) {
      response.writeHead(404, { 'content-type': 'text/html; charset=utf-8' });
      return response.end('<!doctype html><title>Not found</title><p>No such checkout session.</p>');
    }
    if (request.method === 'POST') {
      const paid = session.payment_status === 'paid';
      if (!paid) Object.assign(session, { status: 'complete', payment_status: 'paid', payment_intent: `pi_${randomBytes(12).toString('hex')}` });
      response.writeHead(303, { location: String(session.success_url) });
      response.end();
      // Stripe's webhook comes on its own schedule, usually just after the buyer is back.
      if (!paid) setTimeout(() => void deliver(session).catch(() => undefined), 300);
      return;
    }
    const amount = `${(Number(session.amount_total) / 100).toFixed(2)} ${String(session.currency).toUpperCase()}`;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pay ${escapeHtml(amount)} (test checkout)</title></head><body>` +
        `<main><h1>Pay ${escapeHtml(amount)}</h1><p>A test Checkout page: no card is charged.</p>` +
        `<form method="post" action="/c/pay/${escapeHtml(id)}"><button type="submit">Pay</button></form>` +
        (session.cancel_url ? `<p><a href="${escapeHtml(String(session.cancel_url))}">Back</a></p>` : '') +
        '</main></body></html>',
    );
  };

  const server: Server = createServer(async (request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
      response.end(JSON.stringify(body));
    };
    const page = /^\/c\/pay\/(cs_test_[0-9a-f]+)$/.exec(request.url ?? '');
    if (page && (request.method === 'GET' || request.method === 'POST')) {
      for await (const _chunk of request);
      return hostedPage(request, response, page[1]!);
    }
    if (request.method !== 'POST' || request.url !== '/v1/checkout/sessions')
      return send(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${request.url}).` } });
    const form = await readForm(request);
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined;
    requests.push({ form, idempotencyKey, authorization: request.headers.authorization });
    const suffix = [...failures.keys()].find((key) => idempotencyKey?.endsWith(key));
    const failure = suffix !== undefined ? failures.get(suffix) : undefined;
    if (suffix !== undefined && failure) {
      if (--failure.left === 0) failures.delete(suffix);
      return send(failure.status, { error: { type: 'api_error', message: 'Simulated failure of the fake Stripe.' } });
    }
    if (!form.mode || !form.success_url)
      return send(400, { error: { type: 'invalid_request_error', message: 'Missing required param: mode.', param: 'mode' } });
    if (idempotencyKey && byKey.has(idempotencyKey)) {
      response.writeHead(200, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      return response.end(byKey.get(idempotencyKey));
    }
    const id = `cs_test_${randomBytes(12).toString('hex')}`;
    const metadata = Object.fromEntries(
      Object.entries(form)
        .filter(([key]) => key.startsWith('metadata['))
        .map(([key, value]) => [key.slice(9, -1), value]),
    );
    const session = {
      id,
      object: 'checkout.session',
      mode: form.mode,
      status: 'open',
      payment_status: 'unpaid',
      url: `${baseUrl}/c/pay/${id}`,
      amount_total: Number(form['line_items[0][price_data][unit_amount]'] ?? 0) * Number(form['line_items[0][quantity]'] ?? 1),
      currency: form['line_items[0][price_data][currency]'] ?? 'usd',
      client_reference_id: form.client_reference_id ?? null,
      metadata,
      payment_intent: null,
      success_url: form.success_url,
      cancel_url: form.cancel_url ?? null,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
    };
    sessions.set(id, session);
    const body = JSON.stringify(session);
    if (idempotencyKey) byKey.set(idempotencyKey, body);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: baseUrl,
    requests,
    failFor: (keySuffix, status, times) => void failures.set(keySuffix, { status, left: times }),
    deliverWebhooksTo: (url, secret) => {
      webhook = { url, secret };
    },
    deliveries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
