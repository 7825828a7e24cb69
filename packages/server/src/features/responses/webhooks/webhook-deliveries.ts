import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { WebhookDelivery, WebhookDeliveryListResponse } from '@svc/schemas';
import { keysetPage, NEWEST_FIRST, listAnswer } from '../../../db/keyset-page.ts';
import type { SourceFetchSeam } from '../../../outbound/source-fetch.ts';
import { postPublicHttps } from '../../../outbound/post-public-https.ts';
import type { KeyWebhooks } from '../../identity/index.ts';
import type { TaskEnd, TaskRun, Tasks } from '../../tasks/index.ts';
import type { WebhookConfig } from '../responses-config.ts';
import { signedHeaders } from '../../../outbound/standard-webhooks.ts';

/** The task kind that sends one delivery (docs/tasks.md). */
export const DELIVERY_KIND = 'responses.webhook';
/** The longest wait between two attempts, whatever the backoff reached. */
const MAX_BACKOFF_MS = 10 * 60_000;
/** Deliveries one prune deletes at most (bounded work a turn; the next turn takes the rest). */
const PRUNE_BATCH = 5000;

/** OpenAI's webhook event types of a response that ended, by how its task ended. */
const EVENT_TYPES = {
  completed: 'response.completed',
  failed: 'response.failed',
  cancelled: 'response.cancelled',
  incomplete: 'response.incomplete',
} as const;

type DeliveryListRow = Omit<WebhookDelivery, 'created_at' | 'delivered_at'> & { created_at: Date | string; delivered_at: Date | string | null };

interface DeliveryRow {
  id: string;
  url: string;
  credential_id: string | null;
  payload: string;
  attempts: number;
  status: string;
}

/**
 * Webhooks for finished background responses (docs/inference.md, "Webhooks"): the operator's
 * endpoint (`SVC_RESPONSES_WEBHOOK_URL`) and the endpoint of the developer key that made the
 * response (`PUT /v1/developer/credentials/{id}/webhook`, signed with that endpoint's own secret)
 * get OpenAI's `response.completed`, `.failed`,
 * `.cancelled` and `.incomplete` events, signed as Standard Webhooks. Each delivery is a row of
 * `svc_webhook_deliveries`, sent by a task of the durable store (any replica; a replica that dies
 * mid-delivery leaves it to another), retried with exponential backoff, every attempt recorded.
 * The destination passes the PDF URL fetch's rules (public https only, the address pinned).
 */
export class WebhookDeliveries {
  readonly #sequelize: Sequelize;
  readonly #tasks: Tasks;
  readonly #config: WebhookConfig;
  readonly #seam: SourceFetchSeam;
  readonly #keyWebhooks: KeyWebhooks;

  constructor(sequelize: Sequelize, tasks: Tasks, config: WebhookConfig, keyWebhooks: KeyWebhooks, seam: SourceFetchSeam = {}) {
    this.#sequelize = sequelize;
    this.#tasks = tasks;
    this.#config = config;
    this.#keyWebhooks = keyWebhooks;
    this.#seam = seam;
    // Registered even with no operator endpoint: any key may set its own at any time.
    tasks.register(DELIVERY_KIND, (run) => this.#deliver(run));
  }

  /**
   * Records the event of a response that ended and queues its deliveries: to the operator's
   * endpoint, and to that of the key that made it (`credentialId`), each set; nothing when neither
   * is. Given the `transaction` that ends the task (a reaped runner's), all are written with it.
   */
  async responseEnded(
    owner: string,
    responseId: string,
    status: keyof typeof EVENT_TYPES,
    credentialId: string | undefined,
    transaction?: Transaction,
  ): Promise<void> {
    const keyEndpoint = credentialId ? await this.#keyWebhooks.endpointOf(credentialId, transaction) : undefined;
    const targets = [
      ...(this.#config.url ? [{ url: this.#config.url, credentialId: null }] : []),
      // The key's delivery names the key, not the endpoint: it is sent where the key's endpoint is then, under its secret then.
      ...(keyEndpoint ? [{ url: keyEndpoint.url, credentialId: credentialId! }] : []),
    ];
    for (const target of targets) {
      // Each delivery is its own event (its id is the `webhook-id` a receiver deduplicates by).
      const id = `evt_${randomBytes(16).toString('hex')}`;
      const type = EVENT_TYPES[status];
      const payload = JSON.stringify({ id, object: 'event', type, created_at: Math.floor(Date.now() / 1000), data: { id: responseId } });
      await this.#sequelize.query(
        `INSERT INTO svc_webhook_deliveries (id, owner, event_type, response_id, url, payload, credential_id)
         VALUES (:id, :owner, :type, :responseId, :url, :payload, :credentialId)`,
        { replacements: { id, owner, type, responseId, url: target.url, payload, credentialId: target.credentialId }, ...(transaction ? { transaction } : {}) },
      );
      // A delivery must not run twice at once, but may be taken up again: its attempts are counted in its row.
      await this.#tasks.create({ owner, kind: DELIVERY_KIND, input: { delivery_id: id }, maxAttempts: 3 }, transaction);
    }
  }

  /**
   * Deletes deliveries older than the retention (`SVC_RESPONSES_WEBHOOK_RETENTION_DAYS`) that are
   * no longer pending, a bounded batch a turn (the next turn takes the rest); answers how many.
   */
  async prune(): Promise<number> {
    const rows = await this.#sequelize.query(
      `DELETE FROM svc_webhook_deliveries WHERE id IN (
         SELECT id FROM svc_webhook_deliveries WHERE created_at < now() - make_interval(days => :days) AND status <> 'pending' ORDER BY created_at LIMIT :batch
       ) RETURNING id`,
      { replacements: { days: this.#config.retentionDays, batch: PRUNE_BATCH }, type: QueryTypes.SELECT },
    );
    return rows.length;
  }

  /**
   * Deliveries newest first, a page at a time (`GET /v1/webhooks/deliveries`): every one, or with
   * `owner` only those of its responses to its keys' endpoints; with `credentialId` only that key's.
   */
  async page(
    limit: number,
    cursor: string | undefined,
    only: { owner?: string | undefined; credentialId?: string | undefined } = {},
  ): Promise<WebhookDeliveryListResponse> {
    const page = await keysetPage<DeliveryListRow>(
      this.#sequelize,
      {
        select: 'id, event_type, response_id, credential_id, status, attempts, last_status, last_error, created_at, delivered_at',
        from: 'svc_webhook_deliveries',
        where: [only.owner !== undefined && 'owner = :owner AND credential_id IS NOT NULL', only.credentialId !== undefined && 'credential_id = :credentialId'],
        replacements: { owner: only.owner ?? null, credentialId: only.credentialId ?? null },
        keys: NEWEST_FIRST,
      },
      { limit, cursor },
    );
    const data = page.rows.map((row) => ({
      id: row.id,
      event_type: row.event_type,
      response_id: row.response_id,
      credential_id: row.credential_id,
      status: row.status,
      attempts: row.attempts,
      last_status: row.last_status,
      last_error: row.last_error,
      created_at: new Date(row.created_at).toISOString(),
      delivered_at: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
    }));
    return { object: 'list', ...listAnswer(page, data) };
  }

  async #deliver({ task, signal }: TaskRun): Promise<TaskEnd> {
    const { delivery_id: id } = task.input as { delivery_id: string };
    const [row] = await this.#sequelize.query<DeliveryRow>(
      'SELECT id, url, credential_id, payload, attempts, status FROM svc_webhook_deliveries WHERE id = :id',
      { replacements: { id }, type: QueryTypes.SELECT },
    );
    if (row?.status !== 'pending') return { status: 'completed', result: { status: row?.status ?? 'gone' } };
    const endpoint = await this.#endpointOf(row);
    if (!endpoint) {
      const error = "The key's webhook endpoint was removed before the event was delivered.";
      await this.#sequelize.query("UPDATE svc_webhook_deliveries SET status = 'failed', last_error = :error WHERE id = :id", { replacements: { id, error } });
      return { status: 'failed', code: 'webhook_endpoint_removed', message: error };
    }
    for (let attempt = row.attempts; attempt < this.#config.attempts; attempt++) {
      if (attempt > 0) await sleep(Math.min(MAX_BACKOFF_MS, this.#config.retryBaseMs * 2 ** (attempt - 1)), undefined, { signal });
      let status: number | null = null;
      let error: string | null = null;
      try {
        status = await postPublicHttps(
          endpoint.url,
          row.payload,
          signedHeaders(endpoint.secret, row.id, row.payload),
          { timeoutMs: this.#config.timeoutMs, signal },
          this.#seam,
        );
        if (status < 200 || status >= 300) error = `HTTP ${status}`;
      } catch (failure) {
        if (signal.aborted) throw failure;
        error = failure instanceof Error ? failure.message : String(failure);
      }
      const delivered = error === null;
      const final = delivered ? 'delivered' : attempt + 1 >= this.#config.attempts ? 'failed' : 'pending';
      await this.#sequelize.query(
        `UPDATE svc_webhook_deliveries SET attempts = attempts + 1, last_status = :status, last_error = :error, status = :final,
           delivered_at = CASE WHEN :final = 'delivered' THEN now() ELSE NULL END WHERE id = :id`,
        { replacements: { id, status, error, final } },
      );
      if (delivered) return { status: 'completed', result: { status: 'delivered', attempts: attempt + 1 } };
    }
    return { status: 'failed', code: 'webhook_delivery_failed', message: `The endpoint refused or did not answer ${this.#config.attempts} attempts.` };
  }

  /** The operator's endpoint as the delivery was addressed; a key's where it is now (set again: a new URL and secret), or none once removed. */
  async #endpointOf(row: DeliveryRow): Promise<{ url: string; secret: string } | undefined> {
    if (row.credential_id === null) return { url: row.url, secret: this.#config.secret };
    return this.#keyWebhooks.endpointOf(row.credential_id);
  }
}
