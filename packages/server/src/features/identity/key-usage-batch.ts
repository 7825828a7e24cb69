import type { Sequelize } from 'sequelize';
import type { KeyCall } from './key-usage.ts';

const DAY_MS = 86_400_000;

interface Pending {
  credentialId: string;
  day: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

/**
 * One statement for any number of (key, day, model) rows: seven arrays unnested into rows, so a
 * flush of many keys stays one round trip.
 */
const FLUSH_SQL = `INSERT INTO svc_developer_key_usage (credential_id, day, model, requests, prompt_tokens, completion_tokens, total_tokens, credits)
  SELECT credential_id, day, model, requests, prompt_tokens, completion_tokens, total_tokens, 0
  FROM unnest(ARRAY[:credentialIds]::text[], ARRAY[:days]::date[], ARRAY[:models]::text[], ARRAY[:requests]::bigint[],
    ARRAY[:promptTokens]::bigint[], ARRAY[:completionTokens]::bigint[], ARRAY[:totalTokens]::bigint[])
    AS batch (credential_id, day, model, requests, prompt_tokens, completion_tokens, total_tokens)
  ON CONFLICT (credential_id, day, model) DO UPDATE SET
    requests = svc_developer_key_usage.requests + EXCLUDED.requests,
    prompt_tokens = svc_developer_key_usage.prompt_tokens + EXCLUDED.prompt_tokens,
    completion_tokens = svc_developer_key_usage.completion_tokens + EXCLUDED.completion_tokens,
    total_tokens = svc_developer_key_usage.total_tokens + EXCLUDED.total_tokens`;

/** Each key's latest use: one statement for any number of keys, never moving a time backwards (replicas flush in any order). */
const LAST_USED_SQL = `UPDATE svc_developer_keys k SET last_used_at = GREATEST(k.last_used_at, used.at)
  FROM unnest(ARRAY[:credentialIds]::text[], ARRAY[:ats]::timestamptz[]) AS used (credential_id, at)
  WHERE k.id = used.credential_id`;

/** Most keys whose last use is held in memory between flushes; one more flushes at once (memory stays bounded whatever the traffic). */
const MAX_PENDING_USES = 10_000;

/**
 * The usage counters of calls made with developer keys (requests and tokens per key, UTC day and
 * model), summed in memory and written as one statement every `flushMs` or `flushCalls` calls,
 * whichever comes first, and on a graceful stop (docs/limits.md, "Usage counters"). A process
 * killed outright loses at most the last `flushMs` of these counters; credits are not here: a
 * committed hold writes its credits in the ledger's own transaction (`addKeyUsage`).
 */
export class KeyUsageBatch {
  readonly #sequelize: Sequelize;
  readonly #flushMs: number;
  readonly #flushCalls: number;
  readonly #onError: (error: unknown) => void;
  #pending = new Map<string, Pending>();
  /** Key id to the time of its latest authenticated request since the last flush. */
  #used = new Map<string, number>();
  #calls = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #writing = new Set<Promise<void>>();
  /** The current UTC day as text and when it ends: made once a day, not once a call. */
  #day = '';
  #dayEndsAt = 0;
  #closed = false;

  constructor(sequelize: Sequelize, options: { flushMs: number; flushCalls: number; onError: (error: unknown) => void }) {
    this.#sequelize = sequelize;
    this.#flushMs = options.flushMs;
    this.#flushCalls = options.flushCalls;
    this.#onError = options.onError;
  }

  /** A usage event: counted when it is a developer key's call. */
  readonly listener = (event: { developerKeyId?: string; model: string; usage: KeyCall['usage'] }): void => {
    if (event.developerKeyId === undefined) return;
    this.add({ credentialId: event.developerKeyId, model: event.model, usage: event.usage });
  };

  /** A request authenticated with a key: its last use, written with the next flush. */
  used(credentialId: string, now = Date.now()): void {
    this.#used.delete(credentialId);
    this.#used.set(credentialId, now);
    if (this.#used.size >= MAX_PENDING_USES) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#flushMs).unref();
  }

  add(call: KeyCall, now = Date.now()): void {
    const day = this.#today(now);
    const key = `${call.credentialId}\n${day}\n${call.model}`;
    let row = this.#pending.get(key);
    if (!row) {
      row = { credentialId: call.credentialId, day, model: call.model, requests: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0 };
      this.#pending.set(key, row);
    }
    row.requests += 1;
    row.promptTokens += call.usage.prompt_tokens;
    row.completionTokens += call.usage.completion_tokens ?? 0;
    row.totalTokens += call.usage.total_tokens;
    if (++this.#calls >= this.#flushCalls) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#flushMs).unref();
  }

  /** Writes what is pending; resolves once it and every write begun before it are done (failures are logged and kept for the next flush). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const rows = [...this.#pending.values()];
    this.#pending = new Map();
    this.#calls = 0;
    const uses = this.#used;
    this.#used = new Map();
    const earlier = [...this.#writing];
    if (rows.length > 0) {
      const writing = this.#write(rows).finally(() => this.#writing.delete(writing));
      this.#writing.add(writing);
      earlier.push(writing);
    }
    if (uses.size > 0) {
      const writing = this.#writeUses(uses).finally(() => this.#writing.delete(writing));
      this.#writing.add(writing);
      earlier.push(writing);
    }
    await Promise.all(earlier);
  }

  /** A graceful stop: everything pending is written before the database closes. */
  close(): Promise<void> {
    this.#closed = true;
    return this.flush();
  }

  async #write(rows: Pending[]): Promise<void> {
    try {
      await this.#sequelize.query(FLUSH_SQL, {
        // A replacement array is written as a comma list: ARRAY[...] around it makes it one array
        // again (rows is never empty here, and ARRAY[] would need a type of its own).
        replacements: {
          credentialIds: rows.map((row) => row.credentialId),
          days: rows.map((row) => row.day),
          models: rows.map((row) => row.model),
          requests: rows.map((row) => row.requests),
          promptTokens: rows.map((row) => row.promptTokens),
          completionTokens: rows.map((row) => row.completionTokens),
          totalTokens: rows.map((row) => row.totalTokens),
        },
      });
    } catch (error) {
      this.#onError(error);
      // Kept for the next flush (a database outage): counted once it is back.
      for (const row of rows) this.#merge(row);
      if (!this.#closed) this.#timer ??= setTimeout(() => void this.flush(), this.#flushMs).unref();
    }
  }

  async #writeUses(uses: Map<string, number>): Promise<void> {
    try {
      await this.#sequelize.query(LAST_USED_SQL, {
        replacements: { credentialIds: [...uses.keys()], ats: [...uses.values()].map((at) => new Date(at).toISOString()) },
      });
    } catch (error) {
      this.#onError(error);
      // Kept for the next flush unless a newer use of the key came in meanwhile.
      for (const [credentialId, at] of uses) if ((this.#used.get(credentialId) ?? 0) < at) this.#used.set(credentialId, at);
      if (!this.#closed) this.#timer ??= setTimeout(() => void this.flush(), this.#flushMs).unref();
    }
  }

  #merge(row: Pending): void {
    const key = `${row.credentialId}\n${row.day}\n${row.model}`;
    const pending = this.#pending.get(key);
    if (!pending) {
      this.#pending.set(key, row);
      return;
    }
    pending.requests += row.requests;
    pending.promptTokens += row.promptTokens;
    pending.completionTokens += row.completionTokens;
    pending.totalTokens += row.totalTokens;
  }

  #today(now: number): string {
    if (now >= this.#dayEndsAt || now < this.#dayEndsAt - DAY_MS) {
      this.#day = new Date(now).toISOString().slice(0, 10);
      this.#dayEndsAt = now - (now % DAY_MS) + DAY_MS;
    }
    return this.#day;
  }
}
