import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CACHE_OPT_IN_HEADER, CACHE_STATUS_HEADER, RESPONSE_CACHE_NAME, type Principal } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { canonicalJson } from '../../http/canonical-json.ts';
import { SerializedJson } from '../../http/serialized-json.ts';
import type { CacheStats, PurgeResult } from '../../observability/cache-registry.ts';
import { principalKey } from '../identity/index.ts';
import type { ResolvedModel } from '../models/index.ts';
import type { InvocationContext } from './invoke-model.ts';
import type { ResponseCacheConfig } from './response-cache-config.ts';
import { ResponseCacheFront } from './response-cache-front.ts';
import { type EntryStanding, ResponseCacheStore } from './response-cache-store.ts';

/** Principals whose own hits and misses one process keeps for the report (the least recent beyond are forgotten). */
const PRINCIPALS_COUNTED = 10_000;

/** How often expired and over-cap entries are swept while no write evicts them. */
const SWEEP_INTERVAL_MS = 60_000;

export type CacheStatus = 'hit' | 'miss';

/**
 * Principals whose entries are their own. The shared ones (the demo credential, open access)
 * stand for many callers, so a hit there would tell one caller what another asked: never cached.
 */
const OWN_PRINCIPALS: ReadonlySet<Principal['kind']> = new Set(['operator', 'agent']);

/** One call the cache may answer: its operation, the model it resolves to, and its validated body. */
export interface CacheableCall {
  operation: string;
  resolved: ResolvedModel;
  body: { model?: string | undefined };
}

/** An answer and, when the cache was consulted, whether it served it. */
export interface CachedAnswer<T> {
  body: T;
  cache?: CacheStatus;
}

/**
 * The key of a call: the principal, the operation, the model's id and the canonical request
 * (keys sorted, defaults applied by validation, the model field set to the resolved id so
 * naming the default model and naming none are one request). Hashed, so a key holds no request text.
 */
function cacheKey(principal: Principal, call: CacheableCall): string {
  const canonical = canonicalJson({ ...call.body, model: call.resolved.model.id });
  return createHash('sha256')
    .update(`${principalKey(principal)}\n${call.operation}\n${call.resolved.model.id}\n`)
    .update(canonical)
    .digest('base64url');
}

/**
 * Whether an answer is the resolved model's own (its `svc.model`): a fallback's answer is another
 * model's, and the built-in engine's is never cached, so neither is kept under this model's key.
 */
function servedByResolved(body: unknown, resolved: ResolvedModel): boolean {
  return (body as { svc?: { model?: unknown } } | null)?.svc?.model === resolved.model.id;
}

/** Whether a chat or Responses request opted in: not streamed, temperature 0, and the opt-in header. */
export function chatMayBeCached(
  headers: { [CACHE_OPT_IN_HEADER]?: string | undefined },
  body: { temperature?: number | null; stream?: boolean | null },
): boolean {
  return headers[CACHE_OPT_IN_HEADER] === 'true' && body.temperature === 0 && body.stream !== true;
}

/** The answer header of a call the cache considered; none for one it did not. */
export function cacheHeaders(status: CacheStatus | undefined): Record<string, string> | undefined {
  return status === undefined ? undefined : { [CACHE_STATUS_HEADER]: status };
}

/**
 * The exact response cache (docs/inference.md, "Response cache"): answers of upstream models kept
 * in the database for every replica, keyed by principal, operation, model and canonical request.
 * A hit is the stored JSON text, sent as it is (see `through`). The bodies of recent entries are
 * also held in memory (ResponseCacheFront) with the standing of their row: a hit of one reads
 * nothing while that standing is trusted (see `trustMs`), and only the row's standing after.
 * Hits and misses are counted per process; entries and bytes are read from the database.
 */
export class ResponseCache {
  private readonly store: ResponseCacheStore;
  private readonly front: ResponseCacheFront;
  /**
   * How long a held body's standing is trusted without reading its row again, from the moment
   * the read or write that gave it began. On the embedded database, for ever: no other process
   * opens it (its data directory is locked), so every write, purge and eviction of the cache is
   * this process's own, and the standing against the totals this process has seen is the
   * database's answer. On a shared one, SVC_RESPONSE_CACHE_MEMORY_TRUST_MS: a purge answers only
   * once that long has passed since its delete, so no replica serves a purged answer after it.
   */
  private readonly trustMs: number;
  /** The highest running totals seen (writes and reads answer them): on the embedded database, the database's own. */
  private entriesWritten = 0;
  private bytesWritten = 0;
  /** Moves at the start and the end of each purge: a read or write that overlapped one does not leave its body held. */
  private generation = 0;
  private readonly config: ResponseCacheConfig;
  private readonly deps: Pick<ServerDeps, 'usage' | 'log'>;
  private hits = 0;
  private misses = 0;
  /** Each principal's own hits and misses in this process, for its view of the report: the most recent PRINCIPALS_COUNTED principals. */
  private readonly lookupsOf = new Map<string, { hits: number; misses: number }>();

  constructor(deps: Pick<ServerDeps, 'database' | 'config' | 'usage' | 'log' | 'caches' | 'scheduler'>) {
    this.config = deps.config.responseCache;
    this.deps = deps;
    this.store = new ResponseCacheStore(deps.database.sequelize, this.config);
    this.front = new ResponseCacheFront(this.config.memoryBytes);
    this.trustMs = deps.database.kind === 'embedded' ? Number.POSITIVE_INFINITY : this.config.memoryTrustMs;
    deps.caches.register({
      name: RESPONSE_CACHE_NAME,
      description: 'Answers of upstream models to repeated deterministic requests, per principal, shared by every replica through the database',
      stats: () => this.stats(),
      statsFor: (owner) => this.statsFor(owner),
      purge: (options) => this.purge(options),
    });
    deps.scheduler.every('inference.response-cache.sweep', SWEEP_INTERVAL_MS, () => this.store.sweep());
  }

  /** Whether a call may be answered from the cache at all (see OWN_PRINCIPALS; the cache saves upstream calls, and a built-in answer has none to save). */
  applies(principal: Principal, resolved: ResolvedModel): boolean {
    return this.config.enabled && OWN_PRINCIPALS.has(principal.kind) && resolved.provider.kind !== 'builtin';
  }

  /**
   * Answers a call from the cache, or runs it and stores its answer. A hit is reported to the
   * usage hook as `cache: 'hit'` with zero tokens (no engine ran). A failed read or write is
   * logged and the call goes on as if uncached: the cache is never why a call fails.
   *
   * With `serialized`, the answer (hit or miss) is a SerializedJson typed as the answer it holds:
   * for a route that hands it straight to its response, which writes the text as it is, so a hit
   * parses and serialises nothing. Without it (the credit route, whose funding step reads the
   * completion), a hit is the stored text parsed back, which serialises to the same bytes.
   *
   * `stands`, when given, is asked of a hit's text before it is served: an answer that names
   * state which may since have gone (a stored response, deleted) is then a miss, computed again.
   * Only the answer the resolved model itself served is stored: a fallback's answer (another
   * model, or the built-in engine) is passed on unkept, so a hit is always the named model's.
   */
  async through<T>(
    request: InvocationContext & { principal: Principal },
    call: CacheableCall,
    compute: () => Promise<T>,
    options: { serialized: boolean; stands?: (text: Buffer) => Promise<boolean> },
  ): Promise<CachedAnswer<T>> {
    if (!this.applies(request.principal, call.resolved)) return { body: await compute() };
    const started = performance.now();
    const key = cacheKey(request.principal, call);
    const held = this.front.get(key);
    if (held !== undefined && performance.now() < held.trustedUntil && this.isLive(held.standing)) {
      if (!options.stands || (await options.stands(held.bytes))) return this.hit(request, call, started, held.bytes, options);
      return this.miss(request, call, key, compute, options);
    }
    const generation = this.generation;
    // Trusted from before the read: a purge whose delete the read did not see had begun after that.
    const trustedUntil = performance.now() + this.trustMs;
    const stored = await this.store.read(key, held?.standing.version).catch((error: unknown) => {
      request.log.warn({ err: error }, 'response cache read failed; answering without it');
      return undefined;
    });
    if (stored !== undefined) {
      this.saw(stored.standing);
      // No body: the row's version is the one held, so the held bytes are its body.
      const bytes = stored.body === null && held !== undefined ? held.bytes : Buffer.from(stored.body ?? '');
      if (!options.stands || (await options.stands(bytes))) {
        if (generation === this.generation) this.front.set(key, { standing: stored.standing, bytes, trustedUntil });
        return this.hit(request, call, started, bytes, options);
      }
    }
    return this.miss(request, call, key, compute, options);
  }

  /** Computes the answer and stores it (when the resolved model served it, it fits, and its caller is still there). */
  private async miss<T>(
    request: InvocationContext & { principal: Principal },
    call: CacheableCall,
    key: string,
    compute: () => Promise<T>,
    options: { serialized: boolean },
  ): Promise<CachedAnswer<T>> {
    this.front.delete(key);
    const generation = this.generation;
    this.misses++;
    this.counted(request.principal).misses++;
    const body = await compute();
    const text = JSON.stringify(body);
    const bytes = Buffer.from(text);
    // A caller that left gets nothing, so nothing is kept either; an answer past the entry cap is passed on unkept.
    if (bytes.length <= this.config.maxEntryBytes && !request.signal.aborted && servedByResolved(body, call.resolved)) {
      const entry = {
        key,
        principal: principalKey(request.principal),
        operation: call.operation,
        model: call.resolved.model.id,
        body: text,
        bytes: bytes.length,
      };
      // Trusted from when the write began: a purge that deleted it had begun after that.
      const writeTrustedUntil = performance.now() + this.trustMs;
      await this.store.write(entry).then(
        (standing) => {
          this.saw(standing);
          if (generation === this.generation) this.front.set(key, { standing, bytes, trustedUntil: writeTrustedUntil });
        },
        (error: unknown) => request.log.warn({ err: error }, 'response cache write failed; the answer is sent unkept'),
      );
    }
    // Serialised once: what was stored is what is sent.
    return { body: options.serialized ? (new SerializedJson(bytes) as unknown as T) : body, cache: 'miss' };
  }

  private hit<T>(
    request: InvocationContext & { principal: Principal },
    call: CacheableCall,
    started: number,
    bytes: Buffer,
    options: { serialized: boolean },
  ): CachedAnswer<T> {
    this.hits++;
    this.counted(request.principal).hits++;
    this.reportHit(request, call, started);
    return { body: options.serialized ? (new SerializedJson(bytes) as unknown as T) : (JSON.parse(bytes.toString('utf8')) as T), cache: 'hit' };
  }

  private saw(standing: EntryStanding): void {
    this.entriesWritten = Math.max(this.entriesWritten, standing.entriesWritten);
    this.bytesWritten = Math.max(this.bytesWritten, standing.bytesWritten);
  }

  /** The store's `live` test (response-cache-store.ts) on a held standing, against the totals seen. */
  private isLive(standing: EntryStanding): boolean {
    return (
      standing.expiresAtMs > Date.now() &&
      standing.entrySeq > this.entriesWritten - this.config.maxEntries &&
      standing.bytesEnd - standing.bytes >= this.bytesWritten - this.config.maxBytes
    );
  }

  private reportHit(request: InvocationContext, call: CacheableCall, started: number): void {
    this.deps.usage.report({
      operation: call.operation,
      engine: call.resolved.model.engine,
      model: call.resolved.model.id,
      usage: { prompt_tokens: 0, total_tokens: 0 },
      latencyMs: performance.now() - started,
      principalId: request.principal.id,
      requestId: request.requestId,
      ok: true,
      cache: 'hit',
    });
  }

  async stats(): Promise<CacheStats> {
    const { entries, bytes } = await this.store.totals();
    return { entries, max_entries: this.config.maxEntries, hits: this.hits, misses: this.misses, bytes, ttl_seconds: this.config.ttlSeconds, shared: true };
  }

  /** One principal's share: its live entries and their bytes (every replica's), and its own lookups in this process. */
  async statsFor(owner: string): Promise<CacheStats> {
    const { entries, bytes } = await this.store.totals(owner);
    const { hits, misses } = this.lookupsOf.get(owner) ?? { hits: 0, misses: 0 };
    return { entries, max_entries: this.config.maxEntries, hits, misses, bytes, ttl_seconds: this.config.ttlSeconds, shared: true };
  }

  /** The principal's counters, moved to the most recent; the least recent go past PRINCIPALS_COUNTED, so the map stays bounded. */
  private counted(principal: Principal): { hits: number; misses: number } {
    const owner = principalKey(principal);
    const counts = this.lookupsOf.get(owner) ?? { hits: 0, misses: 0 };
    this.lookupsOf.delete(owner);
    this.lookupsOf.set(owner, counts);
    if (this.lookupsOf.size > PRINCIPALS_COUNTED) this.lookupsOf.delete(this.lookupsOf.keys().next().value as string);
    return counts;
  }

  /**
   * Deletes the entries, then, on a shared database, waits until no replica trusts a standing it
   * read before the delete (SVC_RESPONSE_CACHE_MEMORY_TRUST_MS): once the purge answers, no
   * replica serves what it deleted.
   */
  async purge(options: { model?: string }): Promise<PurgeResult> {
    // Emptied before (no held body is served while the rows go) and after (none read during the purge is kept).
    this.generation++;
    this.front.clear();
    try {
      const purged = await this.store.purge(options.model);
      if (Number.isFinite(this.trustMs) && this.trustMs > 0) await sleep(this.trustMs);
      return purged;
    } finally {
      this.generation++;
      this.front.clear();
    }
  }
}
