import { billingContract, consoleUrl, creditsContract, offeredPacks } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../service-error.ts';
import { cachedChatCompletion, cacheHeaders, type CacheStatus, type ResponseCache } from '../inference/index.ts';
import { createCheckoutSession } from './checkout.ts';
import { balanceOf } from './credit-ledger.ts';
import type { CreditHoldRenewal } from './credit-hold-renewal.ts';
import { creditsFunding } from './credits-funding.ts';
import { runFunded } from './funding-step.ts';
import { createStripeClient, webhookVerifier } from './stripe-client.ts';
import { usageCsv, usagePage } from './usage-export.ts';
import { handleProcessorWebhook } from './webhooks.ts';

/** The shared demo and open-access principals are one wallet for many callers: they cannot buy or spend credits. */
function requireOwnAccount(kind: string): void {
  if (kind === 'demo' || kind === 'open')
    throw new ServiceError(
      'billing_principal_not_allowed',
      'The shared demo and open-access principals have no credit account; sign in (svc login) and use your own token or developer key.',
    );
}

export function createBillingHandlers(
  deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'models' | 'publicUrls' | 'usage'>,
  responseCache: ResponseCache,
  renewal: CreditHoldRenewal,
) {
  const { sequelize } = deps.database;
  const config = deps.config.billing;
  const stripe = createStripeClient(config);
  const checkoutUrl = () => `${deps.publicUrls().baseUrl}${billingContract.checkout.path}`;
  const balanceHeaders = async (principalId: string) => {
    const balance = await balanceOf(sequelize, principalId);
    return { 'x-svc-remaining-credits': String(balance.spendable), 'x-svc-reserved-credits': String(balance.reserved) };
  };
  const credits = creditsFunding({
    sequelize,
    holdTtlSeconds: config.holdTtlSeconds,
    checkoutUrl,
    log: deps.log.child({ feature: 'billing' }),
    limitDefaults: deps.config.limits.byKind,
    renewal,
  });

  const billing = defineHandlers(billingContract, {
    async checkout({ body, headers }, request) {
      requireOwnAccount(request.principal.kind);
      if (!stripe) throw new ServiceError('billing_not_configured', 'Billing is not configured on this server (STRIPE_SECRET_KEY is unset).');
      const root = deps.publicUrls().baseUrl;
      // A purchase started in the web console comes back to its credits page, which waits for the webhook's grant.
      const toConsole = body.return_to === 'console' && deps.config.console.enabled;
      const session = await createCheckoutSession(
        {
          sequelize,
          stripe: await stripe(),
          successUrl: toConsole ? `${consoleUrl(root)}credits?checkout=success` : (config.successUrl ?? `${root}/?checkout=success`),
          cancelUrl: toConsole ? `${consoleUrl(root)}credits?checkout=cancelled` : (config.cancelUrl ?? `${root}/?checkout=cancelled`),
        },
        { principalId: request.principal.id, packCode: body.pack_code, idempotencyKey: headers['idempotency-key'] },
      );
      return { status: session.replayed ? 200 : 201, body: session };
    },
    async balance(_input, request) {
      return { status: 200, body: { ...(await balanceOf(sequelize, request.principal.id)), packs: offeredPacks(), can_buy: stripe !== undefined } };
    },
    async usage({ query }, request) {
      const headers = await balanceHeaders(request.principal.id);
      if (query.format === 'csv') {
        const { stream, firstPage } = usageCsv(sequelize, request.principal.id, query, request.signal);
        const page = await firstPage;
        const more = page.has_more && !query.all;
        return {
          status: 200,
          body: stream,
          headers: {
            ...headers,
            'x-svc-has-more': more ? '1' : '0',
            ...(more && page.next_cursor ? { 'x-svc-next-cursor': page.next_cursor } : {}),
            'content-disposition': 'attachment; filename="svc-credit-usage.csv"',
          },
        };
      }
      const page = await usagePage(sequelize, request.principal.id, query);
      return {
        status: 200,
        body: page,
        headers: { ...headers, 'x-svc-has-more': page.has_more ? '1' : '0', ...(page.next_cursor ? { 'x-svc-next-cursor': page.next_cursor } : {}) },
      };
    },
    async webhook({ body }, request) {
      const signature = request.headers['stripe-signature'];
      const result = await handleProcessorWebhook(
        { sequelize, webhooks: webhookVerifier, secret: config.stripeWebhookSecret, log: request.log },
        body,
        typeof signature === 'string' ? signature : undefined,
      );
      return { status: 200, body: { received: true, duplicate: result.duplicate } };
    },
  });

  const creditRoutes = defineHandlers(creditsContract, {
    async chat({ body, headers }, request) {
      requireOwnAccount(request.principal.kind);
      // The cache sits inside the funded work: a hit is a successful call, charged its one credit.
      let cache: CacheStatus | undefined;
      const chat = async (chatBody: typeof body, chatRequest: typeof request) => {
        // Parsed, not serialized: the funding step reads the completion (its model, its usage).
        const answer = await cachedChatCompletion(deps, responseCache, headers, chatBody, chatRequest, { serialized: false });
        cache = answer.cache;
        return answer.body;
      };
      const funded = await runFunded(credits, chat, body, request);
      return { ...funded, headers: { ...funded.headers, ...cacheHeaders(cache) } } as never;
    },
  });

  return { billing, credits: creditRoutes };
}
