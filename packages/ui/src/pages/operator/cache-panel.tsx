import { type CachePurgeResponse, RESPONSE_CACHE_NAME } from '@svc/schemas';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorNote } from '../../components/error-note.tsx';
import { useLoad } from '../../hooks.ts';
import { signedInClient } from '../../signed-in.ts';

/** Bytes as a person reads them (1 decimal from KiB up). */
export function readableBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} ${units[0]}` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * The response cache (`GET /v1/cache`, the operator's server-wide view): entries, bytes, hits and
 * misses, and a purge (`DELETE /v1/cache`) that asks once more first: every principal's stored
 * answers go, and their next calls reach the upstream again. It loads its own figures, so a purge
 * reloads them while its receipt stays on screen.
 */
export function CachePanel() {
  const [loaded, reload] = useLoad(async (signal) => (await (await signedInClient()).models.cache(undefined, { signal })).caches, []);
  const [confirming, setConfirming] = useState(false);
  const [purged, setPurged] = useState<CachePurgeResponse | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirming) cancel.current?.focus();
  }, [confirming]);
  const purge = async () => {
    setConfirming(false);
    setFailure(undefined);
    try {
      const svc = await signedInClient();
      setPurged(await svc.models.purgeCache({ query: {} }));
      reload();
    } catch (error) {
      setFailure(error);
    }
  };
  if (loaded.state === 'failed') return <ErrorNote error={loaded.error} />;
  const cache = loaded.state === 'done' ? loaded.value.find((entry) => entry.name === RESPONSE_CACHE_NAME) : undefined;
  if (loaded.state === 'done' && !cache) return <p>The response cache is off on this server.</p>;
  return (
    <div data-testid="response-cache">
      {!cache && <p>Loading…</p>}
      {cache && (
        <dl class="facts">
          <dt>Stored answers</dt>
          <dd data-testid="cache-entries">{cache.entries}</dd>
          <dt>Size</dt>
          <dd>{readableBytes(cache.bytes ?? 0)}</dd>
          <dt>Hits / misses</dt>
          <dd data-testid="cache-hits">
            {cache.hits} / {cache.misses}
            {cache.hit_rate !== null && cache.hit_rate !== undefined && ` (${Math.round(cache.hit_rate * 100)}% hits, counted by this process)`}
          </dd>
          {cache.ttl_seconds !== undefined && (
            <>
              <dt>Kept for</dt>
              <dd>{cache.ttl_seconds} s after it is stored</dd>
            </>
          )}
        </dl>
      )}
      {!confirming && (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Purge the response cache
        </button>
      )}
      {confirming && (
        <fieldset class="confirm">
          <legend>Purge every stored answer? Each principal's next repeat of a call reaches the upstream again (and is charged as usual).</legend>
          <button type="button" class="danger" onClick={purge}>
            Yes, purge
          </button>{' '}
          <button type="button" ref={cancel} onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </fieldset>
      )}
      {purged && (
        <p role="status" data-testid="cache-purged">
          Purged {purged.purged_entries} stored {purged.purged_entries === 1 ? 'answer' : 'answers'} ({readableBytes(purged.purged_bytes)}).
        </p>
      )}
      {failure !== undefined && <ErrorNote error={failure} />}
    </div>
  );
}
