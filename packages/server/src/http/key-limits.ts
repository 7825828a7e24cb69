import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { EffectiveLimits, KeyLimitName, Principal, PrincipalKind } from '@svc/schemas';
import { prepared, queryPrepared } from '../db/prepared.ts';
import { windowStart } from '../db/rate-counters.ts';
import { asyncCommitSql } from '../db/wal-flush.ts';
import { ServiceError } from '../service-error.ts';
import { CHUNK_HEADROOM, SLOT_CHUNK_MIN, SLOT_SETTLE_MS, lentSlots } from './key-limit-slots.ts';
import { KeyLimitTokens, type TokenChunk, remainingByChunk } from './key-limit-tokens.ts';
import { KeyLimitPlaces, PLACE_SETTLE_MS, POOL_ID_PREFIX, poolsPossible } from './key-limit-places.ts';
import type { UsageEvent } from '../inference/usage-hook.ts';
import { REPLAYED_HEADER } from './idempotency.ts';
import { openAiDuration } from './openai-duration.ts';
import { requestState } from './request-state.ts';
import { estimateCallTokens } from './token-estimate.ts';

/** Defaults per principal kind for callers whose resolver attached no limits of their own. */
export type LimitDefaults = Partial<Record<PrincipalKind, EffectiveLimits>>;

const MINUTE_MS = 60_000;
/** The most subjects whose strings a replica keeps (`KeyLimiter.#namesOf`). */
const SUBJECT_NAMES = 10_000;
/** A place taken from this replica's lease of places (`KeyLimitPlaces`), not a row of its own. */
const POOLED = 'pooled';
/** A lease outlives its replica by at most this; live leases are renewed well before. */
const LEASE_TTL_SECONDS = 60;
/**
 * How many times a request refused while slots are lent waits half a settle period and tries
 * again: enough for every live replica to settle; a replica that died holding slots leaves them
 * lent until its minute ends, and then the refusal comes after these waits.
 */
const LENT_RETRIES = 4;
/** An Idempotency-Key counted once stays counted this long: longer than any retry loop. */
const COUNTED_TTL_SECONDS = 86_400;
/**
 * A stored answer that expires sooner than this is not taken as a replay: a request admitted as
 * one must find the answer still there when its handler runs (after its body is read).
 */
const REPLAY_MARGIN_SECONDS = 600;

/** Whether the caller has an answer stored under an Idempotency-Key that the route replays: by route id. */
export type StoredAnswers = Readonly<Partial<Record<string, (scope: { principalId: string; key: string }) => Promise<boolean>>>>;

/** Who a limit counts for: the developer key itself, else the principal. */
export const limitSubject = (principal: Principal): string =>
  principal.developerKeyId ? `key:${principal.developerKeyId}` : `principal:${principal.kind}:${principal.id}`;

const requestsBucket = (subject: string) => `limits:rpm:${subject}`;

/**
 * The minute's hit, only while under the limit: the one statement a request-limited call adds
 * (prepared: it runs on every request). Every request of a key updates the same row, so each
 * waits for the one before to commit; committed asynchronously (`asyncCommitSql`), a commit
 * releases the row without waiting for the WAL flush. A database crash may then forget the last
 * few milliseconds of counts: a few more requests in that minute, never a lost answer or credit.
 */
const COUNT_HIT = prepared(
  `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount)
   SELECT $1::text, $2::timestamptz, 1, 0 FROM (SELECT ${asyncCommitSql}) AS commit_mode
   ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + 1 WHERE svc_rate_counters.hits + 1 <= $3::bigint
   RETURNING hits`,
);
/**
 * A call's token reservation, taken only when it fits in what the minute has left (`$4`, the
 * limit), or when the minute has nothing counted yet (so a limit below one call's estimate still
 * lets one call a minute through). One statement: concurrent reservations on any replica queue on
 * the row, so the minute's reserved and used tokens never pass the limit by more than one call's
 * estimate, and only while the estimates hold.
 */
const RESERVE_TOKENS = prepared(
  `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES ($1::text, $2::timestamptz, 0, $3::bigint)
   ON CONFLICT (bucket, window_start) DO UPDATE SET amount = svc_rate_counters.amount + EXCLUDED.amount
     WHERE svc_rate_counters.amount + EXCLUDED.amount <= $4::bigint OR svc_rate_counters.amount = 0
   RETURNING amount`,
);
/** A reservation settled to the call's reported tokens (or given back: `$3` negative). */
const SETTLE_TOKENS = prepared(
  `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES ($1::text, $2::timestamptz, $4::bigint, GREATEST(0, $3::bigint))
   ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + EXCLUDED.hits, amount = GREATEST(0, svc_rate_counters.amount + $3::bigint)`,
);
const tokensBucket = (subject: string) => `limits:tpm:${subject}`;

/**
 * A request under a token limit, as its usage event names it too: the caller (key, else
 * principal) with the request id, which the caller may choose, so two callers' ids never meet.
 */
const tokenRequestKey = (requestId: string, caller: { id: string; developerKeyId?: string | undefined }) =>
  `${caller.developerKeyId ?? caller.id}\u0000${requestId}`;

function refusal(limit: KeyLimitName, message: string, retryAfterMs: number, headers: Record<string, string>): ServiceError {
  // `retry-after-ms` is what the openai client reads first; `Retry-After` rounds up to whole seconds.
  return new ServiceError(`key_limit_exceeded:${limit}`, message, {
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)),
    headers: { ...headers, 'retry-after-ms': String(Math.max(1, retryAfterMs)) },
  });
}

/**
 * Limits per key and principal kind on every scoped route (docs/limits.md): requests per
 * minute, requests in flight, upstream tokens per minute. Every count is a row in PostgreSQL, so
 * replicas enforce one limit exactly. A caller with no limit costs one property read.
 */
export class KeyLimiter {
  readonly #sequelize: Sequelize;
  readonly #defaults: LimitDefaults;
  /** Leases this process holds, renewed by `renewLeases` so a long stream keeps its place. */
  readonly #leases = new Set<string>();
  /**
   * Leases given back whose row may not be deleted yet, by subject: a request of the same subject
   * waits for them before counting, so one that starts once the one before was answered (the
   * calls of an MCP batch, a client's next request) is not refused for a lease already given up.
   */
  readonly #releasing = new Map<string, Promise<void>>();
  /**
   * Requests under a token limit, by caller and request id (`tokenRequestKey`): their usage is
   * added to the minute's tokens. A caller picks its request ids, so one id may be in flight
   * several times at once: each holds a reference, and the entry goes with the last of them.
   */
  readonly #tokenSubjects = new Map<string, TokenRequest>();
  readonly #onError: (error: unknown) => void;
  readonly #storedAnswers: StoredAnswers;
  /** Places leased for busy keys, handed out without a round trip. */
  readonly #places: KeyLimitPlaces;
  /** Chunks of the minute's tokens reserved for busy keys, taken from without a round trip. */
  readonly #tokens: KeyLimitTokens;
  /** Subjects' strings by developer key id (else by the subject itself). */
  readonly #names = new Map<string, SubjectNames>();
  /** Token entries of requests that ended, forgotten in the next immediate. */
  #forgetting: string[] = [];

  /**
   * `storedAnswers`: routes that keep their answers outside the idempotency table (the
   * credit-funded chat keeps them in its holds), by route id: whether a key has one it replays.
   */
  constructor(sequelize: Sequelize, defaults: LimitDefaults, onError: (error: unknown) => void, storedAnswers: StoredAnswers = {}) {
    this.#sequelize = sequelize;
    this.#defaults = defaults;
    this.#onError = onError;
    this.#storedAnswers = storedAnswers;
    this.#places = new KeyLimitPlaces(sequelize, { ttlSeconds: LEASE_TTL_SECONDS, onError });
    this.#tokens = new KeyLimitTokens(sequelize, onError);
  }

  /** Gives back the places and tokens this replica holds for busy keys (a closing server, after the drain). */
  async close(): Promise<void> {
    await Promise.all([this.#places.close(), this.#tokens.close()]);
  }

  limitsOf(principal: Principal): EffectiveLimits | undefined {
    if (principal.kind === 'operator') return undefined;
    return principal.limits ?? this.#defaults[principal.kind];
  }

  /** Whether the adapter must call `enforce`: checked without a promise, for the callers with no limit. */
  applies(principal: Principal): boolean {
    const limits = this.limitsOf(principal);
    return (
      limits !== undefined && (limits.requests_per_minute !== undefined || limits.tokens_per_minute !== undefined || limits.concurrent_requests !== undefined)
    );
  }

  /**
   * Admits the request or throws 429 `key_limit_exceeded:<limit>`; sets the `x-ratelimit-*` headers.
   * Answers no promise when every limit was decided from memory (a busy key: its tokens' open
   * chunk or shared reading, a place of its lease, the slot its resolver took): the adapter then
   * awaits nothing. Each check goes on in a promise only where it waits for the database.
   */
  enforce(ctx: Context, principal: Principal): Promise<void> | undefined {
    const limits = this.limitsOf(principal);
    if (!limits) return undefined;
    const names = this.#namesOf(principal);
    const check: Check = { ctx, principal, limits, names, now: Date.now(), used: 0, lease: undefined };
    const tpm = limits.tokens_per_minute;
    if (tpm === undefined) return this.#checkPlace(check);
    // A busy key's open chunk of this minute has room: the minute is not full, no read needed.
    // One being reserved (a busy key's renewal) is waited for: the round trip the read would take.
    // Else a busy key's shared reading (`TokenReadings`), else a read.
    const minute = check.now - (check.now % MINUTE_MS);
    const byChunk = this.#tokens.remaining(names.tokens, minute, tpm);
    if (byChunk !== undefined) return this.#checkTokens(check, tpm - byChunk);
    if (this.#tokens.reserving(names.tokens))
      return this.#tokens.remainingWhenReserved(names.tokens, minute, tpm).then((left) => {
        const reading = left === undefined ? this.#tokens.used(names.tokens, minute, tpm, check.now) : tpm - left;
        return typeof reading === 'number' ? this.#checkTokens(check, reading) : reading.then((used) => this.#checkTokens(check, used));
      });
    const reading = this.#tokens.used(names.tokens, minute, tpm, check.now);
    return typeof reading === 'number' ? this.#checkTokens(check, reading) : reading.then((used) => this.#checkTokens(check, used));
  }

  /** The subject's strings, made once per subject rather than per request. */
  #namesOf(principal: Principal): SubjectNames {
    const id = principal.developerKeyId ?? `principal:${principal.kind}:${principal.id}`;
    let names = this.#names.get(id);
    if (names === undefined) {
      // Bounded: a replica serving more subjects than this makes their strings again, no more.
      if (this.#names.size >= SUBJECT_NAMES) this.#names.clear();
      const subject = limitSubject(principal);
      names = { subject, tokens: tokensBucket(subject) };
      this.#names.set(id, names);
    }
    return names;
  }

  #checkTokens(check: Check, used: number): Promise<void> | undefined {
    check.used = used;
    const tpm = check.limits.tokens_per_minute!;
    if (used >= tpm) throw this.#refusal(check, 'tokens_per_minute', `This key used its ${tpm} upstream tokens for this minute.`, undefined);
    return this.#checkPlace(check);
  }

  #checkPlace(check: Check): Promise<void> | undefined {
    const concurrent = check.limits.concurrent_requests;
    if (concurrent === undefined) return this.#checkRequests(check);
    const { subject } = check.names;
    if (this.#places.takeHeld(subject, concurrent)) {
      check.lease = POOLED;
      return this.#checkRequests(check);
    }
    return this.#acquireLease(subject, concurrent).then((lease) => {
      if (!lease) throw this.#refusal(check, 'concurrent_requests', `This key already has ${concurrent} requests in flight.`, undefined);
      check.lease = lease;
      return this.#checkRequests(check);
    });
  }

  #checkRequests(check: Check): Promise<void> | undefined {
    const rpm = check.limits.requests_per_minute;
    if (rpm === undefined) {
      this.#admit(check, undefined);
      return undefined;
    }
    // The developer-key resolver may have counted it already, in the query that found the key (or
    // with a slot its replica holds). A minute that ended since then still counted this request:
    // it is not counted again.
    const counted = check.principal.requestCount;
    if (counted?.hits != null) {
      this.#admit(check, counted.hits);
      return undefined;
    }
    return this.#countRequests(check, rpm).then(
      (hits) => {
        if (hits === undefined) throw this.#refusal(check, 'requests_per_minute', `This key made its ${rpm} requests for this minute.`, rpm);
        this.#admit(check, hits);
      },
      (error: unknown) => {
        if (check.lease) this.#release(check.lease, check.names.subject);
        throw error;
      },
    );
  }

  /** The minute's hits once this request was counted, or undefined when the minute is full. */
  async #countRequests(check: Check, rpm: number): Promise<number | undefined> {
    const { principal, names } = check;
    const counted = principal.requestCount;
    const replay = counted ? undefined : replayScopeOf(check.ctx, principal);
    const countAt = new Date(counted ? counted.windowStart : check.now);
    let hits = counted ? undefined : await this.#countRequest(names.subject, rpm, countAt, replay);
    // Refused while replicas hold slots of the minute they have not used (`KeyLimitSlots`, only
    // for keys whose limit leaves room for a chunk): they give them back within SLOT_SETTLE_MS,
    // so the request waits for them rather than be refused while the minute still has room.
    if (hits === undefined && principal.developerKeyId && rpm >= SLOT_CHUNK_MIN * CHUNK_HEADROOM)
      hits = await this.#countWhileLent(names.subject, () => this.#countRequest(names.subject, rpm, countAt, replay), countAt);
    return hits;
  }

  /**
   * A refusal with the headers of the checks made so far (`hits`: the requests check was made,
   * and refused); a place taken is given back.
   */
  #refusal(check: Check, limit: KeyLimitName, message: string, refusedRpm: number | undefined): ServiceError {
    if (check.lease) this.#release(check.lease, check.names.subject);
    const resetMs = MINUTE_MS - (check.now % MINUTE_MS);
    const reset = openAiDuration(resetMs);
    const texts = limitTexts(check.limits);
    const headers: Record<string, string> = {};
    if (texts.tpm !== undefined) {
      headers['x-ratelimit-limit-tokens'] = texts.tpm;
      headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, check.limits.tokens_per_minute! - check.used));
      headers['x-ratelimit-reset-tokens'] = reset;
    }
    if (refusedRpm !== undefined) {
      headers['x-ratelimit-limit-requests'] = texts.rpm!;
      headers['x-ratelimit-remaining-requests'] = '0';
      headers['x-ratelimit-reset-requests'] = reset;
    }
    return refusal(limit, message, resetMs, headers);
  }

  /**
   * The request is admitted: its headers are set (the minute's count `hits` when it has a request
   * limit), its token entry made, and what it holds is given back when it ends.
   */
  #admit(check: Check, hits: number | undefined): void {
    const { ctx, principal, limits, names, lease } = check;
    const res = ctx.res;
    const reset = openAiDuration(MINUTE_MS - (check.now % MINUTE_MS));
    const texts = limitTexts(limits);
    const tpm = limits.tokens_per_minute;
    if (tpm !== undefined) {
      res.setHeader('x-ratelimit-limit-tokens', texts.tpm!);
      res.setHeader('x-ratelimit-remaining-tokens', String(Math.max(0, tpm - check.used)));
      res.setHeader('x-ratelimit-reset-tokens', reset);
    }
    if (hits !== undefined) {
      res.setHeader('x-ratelimit-limit-requests', texts.rpm!);
      res.setHeader('x-ratelimit-remaining-requests', String(Math.max(0, limits.requests_per_minute! - hits)));
      res.setHeader('x-ratelimit-reset-requests', reset);
    }
    let tokenKey: string | undefined;
    if (tpm !== undefined) {
      tokenKey = tokenRequestKey((ctx.state as { svc: { requestId: string } }).svc.requestId, principal);
      const entry = this.#tokenSubjects.get(tokenKey);
      if (entry) entry.requests += 1;
      else this.#tokenSubjects.set(tokenKey, { subject: names.subject, requests: 1, reservations: undefined });
    }
    if (lease === undefined && tokenKey === undefined) return;
    // A response closes once: `on`, not `once`, spares a wrapper per request.
    const ended = () => this.#ended(ctx, lease, names.subject, tokenKey);
    if (res.closed) ended();
    else res.on('close', ended);
  }

  /** The request's answer closed: its holds go, once the work it started that outlives it (`outliveRequest`) settled. */
  #ended(ctx: Context, lease: string | undefined, subject: string, tokenKey: string | undefined): void {
    const outliving = requestState(ctx).outliving;
    if (outliving?.length) {
      void Promise.allSettled(outliving).then(() => this.#end(lease, subject, tokenKey));
      return;
    }
    this.#end(lease, subject, tokenKey);
  }

  #end(lease: string | undefined, subject: string, tokenKey: string | undefined): void {
    if (lease) this.#release(lease, subject);
    if (tokenKey === undefined) return;
    // Usage is reported as a call ends, which may be in this same close event (a client that
    // left): the request is forgotten only after it, with the others that ended meanwhile in one
    // immediate.
    this.#forgetting.push(tokenKey);
    if (this.#forgetting.length === 1) setImmediate(this.#forgetEnded);
  }

  readonly #forgetEnded = () => {
    const keys = this.#forgetting;
    this.#forgetting = [];
    for (const key of keys) this.#forgetTokenRequest(key);
  };

  #forgetTokenRequest(key: string): void {
    const entry = this.#tokenSubjects.get(key);
    if (!entry || --entry.requests > 0) return;
    this.#tokenSubjects.delete(key);
    // Reservations of calls that reported no usage (refused upstream, failed, cut off) go back.
    for (const reservation of entry.reservations ?? []) this.#settleReservation(entry.subject, reservation, 0, 0);
  }

  /**
   * After the body is read, before any work: an inference call reserves its estimate of tokens
   * (`estimateCallTokens`) of the minute, or is refused with 429 `key_limit_exceeded:tokens_per_minute`
   * when it does not fit. Settled to the usage the call reports (`recordTokens`), or given back
   * when its request ends without any.
   */
  async reserveTokens(ctx: Context, principal: Principal, body: unknown, bodyBytes: number, defaultOutput: number): Promise<void> {
    const tpm = this.limitsOf(principal)?.tokens_per_minute;
    if (tpm === undefined) return;
    const entry = this.#tokenSubjects.get(tokenRequestKey((ctx.state as { svc: { requestId: string } }).svc.requestId, principal));
    if (!entry) return;
    const tokens = estimateCallTokens(body, bodyBytes, defaultOutput);
    const now = Date.now();
    const start = windowStart(new Date(now), 60);
    const resetMs = MINUTE_MS - (now % MINUTE_MS);
    const bucket = tokensBucket(entry.subject);
    const chunk = this.#tokens.take(bucket, start.getTime(), tpm, tokens) ?? (await this.#tokens.takeWhenReserved(bucket, start.getTime(), tpm, tokens));
    if (chunk) {
      (entry.reservations ??= []).push({ windowStart: start, tokens, chunk });
      ctx.res.setHeader('x-ratelimit-remaining-tokens', String(remainingByChunk(chunk)));
      return;
    }
    const [row] = await this.#tokens.writing(bucket, queryPrepared<{ amount: string }>(this.#sequelize, RESERVE_TOKENS, [bucket, start, tokens, tpm]));
    if (!row) {
      const used = await this.#tokensThisMinute(entry.subject, new Date(now));
      const headers = {
        'x-ratelimit-limit-tokens': String(tpm),
        'x-ratelimit-remaining-tokens': String(Math.max(0, tpm - used)),
        'x-ratelimit-reset-tokens': openAiDuration(resetMs),
      };
      throw refusal(
        'tokens_per_minute',
        `This call reserves ${tokens} tokens (its output bound and input estimate) and this key has ${Math.max(0, tpm - used)} of its ${tpm} left for this minute; lower max_tokens or wait.`,
        resetMs,
        headers,
      );
    }
    (entry.reservations ??= []).push({ windowStart: start, tokens });
    this.#tokens.counted(bucket, start.getTime(), tpm, tokens, Number(row.amount));
    ctx.res.setHeader('x-ratelimit-remaining-tokens', String(Math.max(0, tpm - Number(row.amount))));
  }

  /** A finished inference call's tokens: its reservation settled to them, or added to the minute when it had none. */
  recordTokens(event: Pick<UsageEvent, 'requestId' | 'principalId' | 'developerKeyId'>, tokens: number): void {
    const entry = this.#tokenSubjects.get(tokenRequestKey(event.requestId, { id: event.principalId, developerKeyId: event.developerKeyId }));
    if (entry === undefined) return;
    const reservation = entry.reservations?.shift();
    if (reservation) this.#settleReservation(entry.subject, reservation, Math.max(0, tokens), 1);
    else if (tokens > 0) this.#settleTokens(entry.subject, windowStart(new Date(), 60), tokens, 1);
  }

  /** A reservation settled to the tokens its call reported (0: none, its estimate back): in its open chunk, else in the row. */
  #settleReservation(subject: string, reservation: TokenReservation, tokens: number, calls: number): void {
    const delta = tokens - reservation.tokens;
    if (reservation.chunk) {
      this.#tokens.settle(reservation.chunk, delta, calls);
      return;
    }
    this.#settleTokens(subject, reservation.windowStart, delta, calls);
  }

  #settleTokens(subject: string, start: Date, delta: number, calls: number): void {
    if (delta === 0 && calls === 0) return;
    const bucket = tokensBucket(subject);
    this.#tokens.writing(bucket, queryPrepared(this.#sequelize, SETTLE_TOKENS, [bucket, start, delta, calls])).catch(this.#onError);
  }

  #tokensThisMinute(subject: string, now: Date): Promise<number> {
    return this.#tokens.readAmount(tokensBucket(subject), windowStart(now, 60).getTime());
  }

  /**
   * One hit in the minute's window; answers the hits so far, or undefined when the window is full.
   * Only a true replay is not counted again: a request with an Idempotency-Key that this same
   * credential was counted for, on this same route, whose answer the route stored (the
   * idempotency table, `runIdempotent`). Its handler then answers the stored response, or 409
   * `idempotency_conflict` for another body: it never runs the work again. Any other request
   * with a reused key (another route, another credential, a route that stores no answer, a first
   * try still running) is counted as a new request. A refused one leaves its key uncounted.
   */
  async #countRequest(subject: string, max: number, now: Date, replay: ReplayScope | undefined): Promise<number | undefined> {
    const bucket = requestsBucket(subject);
    const start = windowStart(now, 60);
    const countedKey = replay && `${replay.routeId}\u0000${replay.key}`;
    if (replay && (await this.#replays(subject, countedKey!, replay))) {
      // The body is read after this: a reused key with another body is answered 409 without
      // running anything, and counted then, as the request it is.
      this.#countUnlessReplayed(replay.response, bucket, start);
      const [row] = await this.#sequelize.query<{ hits: string }>('SELECT hits FROM svc_rate_counters WHERE bucket = :bucket AND window_start = :start', {
        replacements: { bucket, start },
        type: QueryTypes.SELECT,
      });
      return Number(row?.hits ?? 0);
    }
    const [row] = await queryPrepared<{ hits: string }>(this.#sequelize, COUNT_HIT, [bucket, start, max]);
    if (!row) return undefined;
    if (countedKey) {
      await this.#sequelize.query(
        `INSERT INTO svc_limit_counted (subject, idempotency_key, expires_at) VALUES (:subject, :key, now() + make_interval(secs => :ttl))
         ON CONFLICT (subject, idempotency_key) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        { replacements: { subject, key: countedKey, ttl: COUNTED_TTL_SECONDS } },
      );
    }
    return Number(row.hits);
  }

  /**
   * Whether the request is a true replay: this credential was counted for the key on this route,
   * and the route holds a stored answer for it that it will replay (its probe, else the
   * idempotency table's completed row that is kept at least REPLAY_MARGIN_SECONDS more).
   */
  async #replays(subject: string, countedKey: string, replay: ReplayScope): Promise<boolean> {
    const probe = this.#storedAnswers[replay.routeId];
    const [found] = await this.#sequelize.query(
      probe
        ? 'SELECT 1 FROM svc_limit_counted WHERE subject = :subject AND idempotency_key = :countedKey AND expires_at > now()'
        : `SELECT 1 FROM svc_limit_counted counted JOIN svc_idempotency_keys stored
             ON stored.principal_id = :principal AND stored.route_id = :route AND stored.idempotency_key = :key
           WHERE counted.subject = :subject AND counted.idempotency_key = :countedKey AND counted.expires_at > now()
             AND stored.state = 'completed' AND stored.expires_at > now() + make_interval(secs => :margin)`,
      {
        replacements: { principal: replay.principalId, route: replay.routeId, key: replay.key, subject, countedKey, margin: REPLAY_MARGIN_SECONDS },
        type: QueryTypes.SELECT,
      },
    );
    if (!found) return false;
    return probe ? probe({ principalId: replay.principalId, key: replay.key }) : true;
  }

  #countUnlessReplayed(response: ServerResponse, bucket: string, start: Date): void {
    const count = () => {
      if (response.getHeader(REPLAYED_HEADER) === 'true') return;
      this.#sequelize
        .query(
          `INSERT INTO svc_rate_counters (bucket, window_start, hits, amount) VALUES (:bucket, :start, 1, 0)
           ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + 1`,
          { replacements: { bucket, start } },
        )
        .catch(this.#onError);
    };
    if (response.closed) count();
    else response.once('close', count);
  }

  async #countWhileLent(subject: string, count: () => Promise<number | undefined>, now: Date): Promise<number | undefined> {
    const bucket = requestsBucket(subject);
    const start = windowStart(now, 60);
    // Lent slots read before each count: a count refused after a reading of none lent is final,
    // and slots given back between the first refusal and the first reading are counted again.
    for (let attempt = 0; attempt <= LENT_RETRIES; attempt++) {
      const lent = await lentSlots(this.#sequelize, bucket, start);
      const hits = await count();
      if (hits !== undefined || lent <= 0) return hits;
      if (attempt < LENT_RETRIES) await new Promise((resolve) => setTimeout(resolve, SLOT_SETTLE_MS / 2));
    }
    return undefined;
  }

  /**
   * A place among the subject's requests in flight, or undefined when all are taken: from this
   * replica's lease of places when the key is busy (no round trip), else a row of its own. A
   * request refused while another replica leases places waits for its spare ones to come back
   * (each replica gives them back within `PLACE_SETTLE_MS` of not using them), up to
   * `LENT_RETRIES` times, so the limit is served exactly across replicas.
   */
  async #acquireLease(subject: string, max: number): Promise<string | undefined> {
    if (await this.#places.take(subject, max)) return POOLED;
    this.#places.counted(subject);
    for (let attempt = 0; ; attempt++) {
      const id = await this.#acquireOwnLease(subject, max);
      if (id) return id;
      if (attempt >= LENT_RETRIES || !poolsPossible(max) || !(await this.#othersLeasePlaces(subject))) return undefined;
      await new Promise((resolve) => setTimeout(resolve, PLACE_SETTLE_MS / 2));
      if (await this.#places.take(subject, max)) return POOLED;
    }
  }

  async #othersLeasePlaces(subject: string): Promise<boolean> {
    const rows = await this.#sequelize.query(
      `SELECT 1 FROM svc_limit_leases
       WHERE subject = :subject AND starts_with(id, :pools) AND NOT starts_with(id, :mine) AND expires_at > now() LIMIT 1`,
      { replacements: { subject, pools: POOL_ID_PREFIX, mine: this.#places.prefix }, type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** A row of the request's own among the subject's places, taken under the subject's lock. */
  async #acquireOwnLease(subject: string, max: number): Promise<string | undefined> {
    const id = `lease_${randomBytes(12).toString('base64url')}`;
    await this.#releasing.get(subject);
    const taken = await this.#sequelize.transaction(async (transaction) => {
      // Counting and inserting are one decision: replicas take the subject's lock in turn.
      await this.#sequelize.query('SELECT pg_advisory_xact_lock(hashtext(:subject))', { replacements: { subject: `svc-limit:${subject}` }, transaction });
      const rows = await this.#sequelize.query(
        `INSERT INTO svc_limit_leases (id, subject, expires_at)
         SELECT :id, :subject, now() + make_interval(secs => :ttl)
         WHERE (SELECT count(*) FROM svc_limit_leases WHERE subject = :subject AND expires_at > now()) < :max RETURNING id`,
        { replacements: { id, subject, ttl: LEASE_TTL_SECONDS, max }, type: QueryTypes.SELECT, transaction },
      );
      return rows.length > 0;
    });
    if (!taken) return undefined;
    this.#leases.add(id);
    return id;
  }

  #release(lease: string, subject: string): void {
    if (lease === POOLED) {
      this.#places.give(subject);
      return;
    }
    if (!this.#leases.delete(lease)) return;
    const deleted = this.#sequelize.query('DELETE FROM svc_limit_leases WHERE id = :id', { replacements: { id: lease } }).then(
      () => {},
      (error: unknown) => this.#onError(error),
    );
    const pending = Promise.all([this.#releasing.get(subject), deleted]).then(() => {
      if (this.#releasing.get(subject) === pending) this.#releasing.delete(subject);
    });
    this.#releasing.set(subject, pending);
  }

  /** Housekeeping: keeps this process's leases alive. */
  async renewLeases(): Promise<void> {
    const ids = [...this.#leases, ...this.#places.heldIds()];
    if (ids.length === 0) return;
    await this.#sequelize.query('UPDATE svc_limit_leases SET expires_at = now() + make_interval(secs => :ttl) WHERE id IN (:ids)', {
      replacements: { ttl: LEASE_TTL_SECONDS, ids },
    });
  }

  /** Housekeeping: drops leases of replicas that died and Idempotency-Keys counted long ago. */
  async prune(): Promise<void> {
    await this.#sequelize.query('DELETE FROM svc_limit_leases WHERE expires_at < now()');
    await this.#sequelize.query('DELETE FROM svc_limit_counted WHERE expires_at < now()');
  }
}

/** A request under a token limit: its caller's subject and the reservations of its calls not yet settled. */
interface TokenRequest {
  subject: string;
  /** Requests in flight under this caller and request id (a caller may reuse an id). */
  requests: number;
  /** Made by the first call that reserves: most requests (`GET /v1/models`) never do. */
  reservations: TokenReservation[] | undefined;
}

/** A subject's strings: the subject, and its bucket of the minute's tokens. */
interface SubjectNames {
  subject: string;
  tokens: string;
}

/** One request's limits being checked, carried from one check to the next. */
interface Check {
  ctx: Context;
  principal: Principal;
  limits: EffectiveLimits;
  names: SubjectNames;
  now: number;
  /** The minute's tokens used, as the tokens check read them. */
  used: number;
  /** The place taken under a concurrency limit. */
  lease: string | undefined;
}

/** The limits' own header texts, made once per limits object (a cached key's is shared by its requests). */
const textsByLimits = new WeakMap<EffectiveLimits, { rpm: string | undefined; tpm: string | undefined }>();
function limitTexts(limits: EffectiveLimits): { rpm: string | undefined; tpm: string | undefined } {
  let made = textsByLimits.get(limits);
  if (made === undefined) {
    made = {
      rpm: limits.requests_per_minute === undefined ? undefined : String(limits.requests_per_minute),
      tpm: limits.tokens_per_minute === undefined ? undefined : String(limits.tokens_per_minute),
    };
    textsByLimits.set(limits, made);
  }
  return made;
}

/** A call's tokens reserved in the minute's row, or taken from this replica's chunk of it. */
interface TokenReservation {
  windowStart: Date;
  tokens: number;
  chunk?: TokenChunk;
}

/** What a request's Idempotency-Key may replay: the caller's stored answer of this route under this key. */
interface ReplayScope {
  principalId: string;
  routeId: string;
  key: string;
  /** Tells whether the stored answer was replayed (`Idempotent-Replayed: true`) once it is sent. */
  response: ServerResponse;
}

function replayScopeOf(ctx: Context, principal: Principal): ReplayScope | undefined {
  const value = ctx.req.headers['idempotency-key'];
  const routeId = (ctx.state as { svc?: { routeId?: string } }).svc?.routeId;
  if (typeof value !== 'string' || value.length === 0 || value.length > 255 || routeId === undefined) return undefined;
  return { principalId: principal.id, routeId, key: value, response: ctx.res };
}
