import { createHash } from 'node:crypto';
import { billingLimits, offeredPacks, type ChatCompletionsBody, type Principal } from '@svc/schemas';
import type { Logger } from 'pino';
import type { Sequelize } from 'sequelize';
import type { RequestContext } from '../../http/request-context.ts';
import { ServiceError } from '../../service-error.ts';
import { commitHold, holdCredits, releaseHold, type CreditCaps } from './credit-ledger.ts';
import type { CreditHoldRenewal } from './credit-hold-renewal.ts';
import { limitSubject, type LimitDefaults } from '../../http/key-limits.ts';
import type { FundingDecision, FundingStep } from './funding-step.ts';

/** The same body always hashes the same: keys sorted at every level. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}
export const fingerprintOf = (body: unknown) => createHash('sha256').update(canonical(body)).digest('hex');

/** The caller's credit caps, if it has any: a key's own or its default, else its principal kind's. */
function creditCapsOf(principal: Principal, defaults: LimitDefaults): CreditCaps | undefined {
  const limits = principal.kind === 'operator' ? undefined : (principal.limits ?? defaults[principal.kind]);
  if (limits?.credits_per_day === undefined && limits?.credits_per_month === undefined) return undefined;
  return {
    subject: limitSubject(principal),
    ...(limits.credits_per_day !== undefined ? { perDay: limits.credits_per_day } : {}),
    ...(limits.credits_per_month !== undefined ? { perMonth: limits.credits_per_month } : {}),
  };
}

/**
 * Prepaid credits as a funding step: one credit held per call under its Idempotency-Key before
 * the engine runs, committed with a receipt when the answer is complete, released otherwise. A
 * key whose call completed answers the stored completion again (a streamed call as JSON), never
 * charged twice.
 */
export function creditsFunding(deps: {
  sequelize: Sequelize;
  holdTtlSeconds: number;
  checkoutUrl: () => string;
  log: Logger;
  /** Limits of principal kinds whose resolver attached none (docs/limits.md). */
  limitDefaults: LimitDefaults;
  /** Keeps the holds of running calls from expiring under them. */
  renewal: CreditHoldRenewal;
}): FundingStep {
  return {
    async reserve(body: ChatCompletionsBody, request: RequestContext): Promise<FundingDecision> {
      const idempotencyKey = String(request.headers['idempotency-key']);
      const { principal } = request;
      const decision = await holdCredits(deps.sequelize, {
        principalId: principal.id,
        idempotencyKey,
        fingerprint: fingerprintOf(body),
        credits: billingLimits.creditsPerChatCall,
        ttlSeconds: deps.holdTtlSeconds,
        ...(principal.developerKeyId !== undefined ? { credentialId: principal.developerKeyId } : {}),
        caps: creditCapsOf(principal, deps.limitDefaults),
      });
      switch (decision.kind) {
        case 'capped':
          // 429, not 402: buying credits would not help; the cap's period ending does. Both headers,
          // as every key limit gives them (docs/limits.md): `retry-after-ms` is what openai reads first.
          throw new ServiceError(
            `key_limit_exceeded:credits_per_${decision.period}`,
            `This key may draw ${decision.cap} credits per UTC ${decision.period}, and has; the cap resets when the ${decision.period} ends.`,
            {
              retryAfterSeconds: Math.max(1, Math.ceil(decision.retryAfterMs / 1000)),
              headers: { 'retry-after-ms': String(Math.max(1, decision.retryAfterMs)) },
            },
          );
        case 'replay':
          return { kind: 'answer', status: 200, body: decision.result, headers: { 'idempotent-replayed': 'true' } };
        case 'in_progress':
          throw new ServiceError(
            'idempotency_in_progress',
            'A call with this Idempotency-Key is still running; retry when it has finished to get its answer.',
            { retryAfterSeconds: 1 },
          );
        case 'conflict':
          throw new ServiceError('idempotency_conflict', 'This Idempotency-Key was used with another request body; use a new key for a new request.');
        case 'exhausted':
          return {
            kind: 'answer',
            status: 402,
            headers: { link: `<${deps.checkoutUrl()}>; rel="payment"` },
            body: {
              error: `No spendable credit: a chat call costs ${billingLimits.creditsPerChatCall} credit. Buy a pack at the checkout route.`,
              code: 'credits_exhausted',
              request_id: request.requestId,
              payment: {
                scheme: 'svc-credits',
                credits_required: billingLimits.creditsPerChatCall,
                spendable: decision.spendable,
                checkout: deps.checkoutUrl(),
                packs: offeredPacks(),
              },
            },
          };
        case 'held': {
          const holdId = decision.holdId;
          deps.renewal.track(holdId);
          return {
            kind: 'proceed',
            async settle(outcome) {
              try {
                if (outcome.ok) {
                  const committed = await commitHold(deps.sequelize, holdId, outcome.completion, {
                    operation: 'chat',
                    model: outcome.completion.model,
                    requestId: request.requestId,
                    usage: outcome.usage,
                  });
                  if (committed === 'not_charged')
                    deps.log.error(
                      { holdId, requestId: request.requestId },
                      'a credit call ended after its hold was released, and the balance no longer covers it: delivered and not charged',
                    );
                } else {
                  await releaseHold(deps.sequelize, holdId);
                }
              } catch (error) {
                // The hold stays and expires; housekeeping releases it. The answer is not failed for it.
                deps.log.error({ err: error, holdId }, 'settling a credit hold failed');
              } finally {
                deps.renewal.untrack(holdId);
              }
            },
          };
        }
      }
    },
  };
}
