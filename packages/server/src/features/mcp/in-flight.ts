import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * How often a replica with tool calls in flight asks the database whether one of them was
 * cancelled elsewhere. The poll runs only while a call is in flight: an idle replica has no timer
 * for it (issue 42: a 500 ms timer woke an idle server twice a second).
 */
export const CANCEL_POLL_MS = 500;
/**
 * A cancellation names a call already sent, so it is never much older than the call it names;
 * one older than the call's start by more than this is about an earlier call that reused the id
 * (clients number their requests from 0 again in each session). Covers the clocks of two replicas.
 */
const CANCEL_BEFORE_START_MS = 2_000;
/** Rows of cancellations kept for a call that may still be running somewhere; a tool call ends long before. */
const CANCELLATION_TTL_MS = 3_600_000;

interface Running {
  readonly caller: string;
  readonly id: string;
  readonly startedAt: number;
  /** Stops the call's work (its request's signal aborts). */
  readonly abort: (reason: Error) => void;
}

const keyOf = (caller: string, id: string) => `${caller}\u0000${id}`;

/**
 * Tool calls in progress on this process, by caller and JSON-RPC id, so a `notifications/cancelled`
 * (which a stateless client sends as a request of its own) aborts the call it names. The caller key
 * keeps one caller from cancelling another's call that happens to share an id.
 *
 * A notification that finds no such call here is written to the database (`mcp_cancelled_calls`):
 * the replica running the call reads it within CANCEL_POLL_MS (`pollCancellations`, on a timer of
 * this table's that runs from its first call in flight to its last) and aborts the call there.
 */
export class InFlightCalls {
  private readonly calls = new Map<string, Running>();
  private readonly sequelize: Sequelize | undefined;
  private readonly onPollError: (error: unknown) => void;
  private poll: NodeJS.Timeout | undefined;
  private polling = false;

  /** Without a database, a cancellation reaches only the calls of this process (and nothing polls). */
  constructor(sequelize?: Sequelize, onPollError: (error: unknown) => void = () => {}) {
    this.sequelize = sequelize;
    this.onPollError = onPollError;
  }

  /**
   * Registers a call, with how to stop it; answers how to forget it once done. Aborting is the
   * caller's: the fast path aborts the /mcp request's own signal (abortRequest), which the
   * route's work already follows, so a call makes no signal of its own.
   */
  start(caller: string, id: string | number, abort: (reason: Error) => void): () => void {
    const running: Running = { caller, id: String(id), startedAt: Date.now(), abort };
    const key = keyOf(caller, running.id);
    this.calls.set(key, running);
    this.watchCancellations();
    return () => {
      if (this.calls.get(key) === running) this.calls.delete(key);
      if (this.calls.size === 0) this.stopWatching();
    };
  }

  /** Starts the poll with the first call in flight; a turn still running skips the next rather than overlapping it. */
  private watchCancellations(): void {
    if (this.poll || !this.sequelize) return;
    this.poll = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      this.pollCancellations()
        .catch(this.onPollError)
        .finally(() => {
          this.polling = false;
        });
    }, CANCEL_POLL_MS).unref();
  }

  private stopWatching(): void {
    clearInterval(this.poll);
    this.poll = undefined;
  }

  /**
   * Aborts the caller's calls of those ids that run here; records the others, for the replica that
   * runs them, in one statement (none when every call named runs here). The ids are a request's,
   * which the batch cap bounds (`mcpBatchRules.maxMessages`). Answers how many ran here.
   */
  async cancel(caller: string, ids: readonly unknown[]): Promise<number> {
    const elsewhere = new Set<string>();
    let here = 0;
    for (const id of ids) {
      if (typeof id !== 'string' && typeof id !== 'number') continue;
      const running = this.calls.get(keyOf(caller, String(id)));
      if (running) {
        running.abort(new Error('cancelled by the client (notifications/cancelled)'));
        here++;
      } else elsewhere.add(String(id));
    }
    if (elsewhere.size === 0 || !this.sequelize) return here;
    // One row per id (a Set: one statement may not update the same row twice).
    await this.sequelize.query(
      `INSERT INTO mcp_cancelled_calls (caller, request_id, cancelled_at) SELECT :caller, id, :at FROM unnest(ARRAY[:ids]::text[]) AS id
       ON CONFLICT (caller, request_id) DO UPDATE SET cancelled_at = EXCLUDED.cancelled_at`,
      { replacements: { caller, ids: [...elsewhere], at: new Date() } },
    );
    return here;
  }

  /**
   * Aborts the calls running here that another replica was asked to cancel: one query for every
   * caller with a call in flight, none when there is no call.
   */
  async pollCancellations(): Promise<void> {
    if (!this.sequelize || this.calls.size === 0) return;
    const callers = new Set<string>();
    let oldest = Number.POSITIVE_INFINITY;
    for (const running of this.calls.values()) {
      callers.add(running.caller);
      oldest = Math.min(oldest, running.startedAt);
    }
    const rows = await this.sequelize.query<{ caller: string; request_id: string; cancelled_at: Date | string }>(
      'SELECT caller, request_id, cancelled_at FROM mcp_cancelled_calls WHERE caller IN (:callers) AND cancelled_at >= :since',
      { replacements: { callers: [...callers], since: new Date(oldest - CANCEL_BEFORE_START_MS) }, type: QueryTypes.SELECT },
    );
    for (const row of rows) {
      const running = this.calls.get(keyOf(row.caller, row.request_id));
      if (running && new Date(row.cancelled_at).getTime() >= running.startedAt - CANCEL_BEFORE_START_MS)
        running.abort(new Error('cancelled by the client (notifications/cancelled, received by another replica)'));
    }
  }

  /** Forgets cancellations no call can still be waiting for. */
  async prune(): Promise<void> {
    await this.sequelize?.query('DELETE FROM mcp_cancelled_calls WHERE cancelled_at < :before', {
      replacements: { before: new Date(Date.now() - CANCELLATION_TTL_MS) },
    });
  }

  get size(): number {
    return this.calls.size;
  }
}
