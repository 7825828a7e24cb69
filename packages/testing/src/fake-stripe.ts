import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Stripe's API (it cannot be reached from here), speaking its wire format
 * for what svc calls: `POST /v1/checkout/sessions` with a form-encoded body and an optional
 * `Idempotency-Key` (the same key answers the same object, as Stripe does), answering a
 * `checkout.session` object; errors in Stripe's `{ error: { type, message } }` shape.
 */
export interface FakeStripe {
  url: string;
  /** Every create request as Stripe would see it: the flattened form fields and the headers. */
  requests: Array<{ form: Record<string, string>; idempotencyKey: string | undefined; authorization: string | undefined }>;
  /** Make creates whose Idempotency-Key ends with `keySuffix` answer this HTTP status with a Stripe error, `times` times. */
  failFor(keySuffix: string, status: number, times: number): void;
  close(): Promise<void>;
}

async function readForm(request: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const requests: FakeStripe['requests'] = [];
  const byKey = new Map<string, string>();
  const failures = new Map<string, { status: number; left: number }>();
  const server: Server = createServer(async (request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
      response.end(JSON.stringify(body));
    };
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
      url: `https://checkout.stripe.com/c/pay/${id}`,
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
    const body = JSON.stringify(session);
    if (idempotencyKey) byKey.set(idempotencyKey, body);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    failFor: (keySuffix, status, times) => void failures.set(keySuffix, { status, left: times }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
