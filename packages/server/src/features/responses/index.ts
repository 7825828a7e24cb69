import type { ServerDeps } from '../../deps.ts';
import type { Feature } from '../feature.ts';
import type { KeyWebhooks } from '../identity/index.ts';
import type { ResponseCache } from '../inference/index.ts';
import type { Tasks } from '../tasks/index.ts';
import { BACKGROUND_KIND, credentialOfTask } from './background.ts';
import { createResponsesHandlers } from './handlers.ts';
import { ResponseStore } from './response-store.ts';
import { WebhookDeliveries } from './webhooks/webhook-deliveries.ts';

/** How often expired stored responses are deleted (reads ignore them at once). */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * OpenAI's Responses API over every chat model (docs/inference.md, "The Responses API"): the
 * routes, and the store of responses in the database with its retention sweep.
 */
export function createResponsesFeature(
  deps: Pick<ServerDeps, 'database' | 'config' | 'models' | 'usage' | 'scheduler' | 'testSeams'>,
  given: { responseCache: ResponseCache; tasks: Tasks; keyWebhooks: KeyWebhooks },
) {
  const config = deps.config.responses;
  const store = new ResponseStore(deps.database.sequelize, config);
  deps.scheduler.every('responses.sweep', SWEEP_INTERVAL_MS, () => store.sweep());
  const webhooks = new WebhookDeliveries(deps.database.sequelize, given.tasks, config.webhook, given.keyWebhooks, deps.testSeams?.webhookFetch);
  deps.scheduler.every('responses.webhook-prune', SWEEP_INTERVAL_MS, () => webhooks.prune());
  // A background response whose runner died is ended by whichever replica reaps it; that one
  // announces it, its delivery written in the transaction that fails the task.
  given.tasks.onReaped(BACKGROUND_KIND, (task, transaction) =>
    webhooks.responseEnded(task.owner, task.id, task.status === 'cancelled' ? 'cancelled' : 'failed', credentialOfTask(task), transaction),
  );
  return {
    handlers: {
      responses: createResponsesHandlers({ models: deps.models, usage: deps.usage, store, config, tasks: given.tasks, webhooks }, given.responseCache),
    },
  } satisfies Feature<'responses'>;
}
