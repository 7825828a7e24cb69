import { sqlMigration } from './types.ts';

/**
 * Puts in batches: one call admits and stores every put a replica has waiting, in arrival order,
 * in one transaction. Admission stays exact per put (each is checked against the counters as
 * the puts before it in the batch left them; a refused put counts nothing), created_at still
 * grows in commit order, and the hot rows every put needs (the put-order row, the global window,
 * and under load the address and principal windows) are locked once per batch instead of once
 * per put: under concurrency, per-put statements spent most of their time queueing for, waking
 * on and re-checking those rows.
 *
 * `p_puts` is a JSON array; each element carries the item's columns and `windows`, an array of
 * `{ bucket, amount, max_hits, max_amount }` (the windows it counts in; amount is its bytes, 0
 * for the per-address window). Answers a JSON array in the same order, each element one of
 * `{ "inserted": row }`, `{ "refused": [{ bucket, hits, amount }, ...] }` (the counters as the
 * put would have left them, for naming the full window), or `{ "race": true }` (a live item of
 * the same caller and idempotency key exists: the caller answers it as a replay).
 *
 * Locks are taken in one order by every batch (the put-order row, then the window rows by
 * bucket name), so two replicas' batches never deadlock. The retention cap deletes the rows
 * that fell out of the newest `p_retention` (by seq) through this batch, looking only a little
 * further back than that, so the scan never walks the dead index entries of earlier deletes;
 * housekeeping sweeps any row a gap in the sequence left behind (service.ts).
 */
const createBatchFunction = `CREATE OR REPLACE FUNCTION svc_blackboard_put_batch(p_puts jsonb, p_window_start timestamptz, p_retention bigint)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  order_bucket constant text := 'blackboard:put-order';
  v_stamp bigint;
  v_buckets text[];
  v_hits bigint[];
  v_amounts bigint[];
  v_fits boolean;
  v_results jsonb;
  v_raced int;
  v_put jsonb;
  v_window jsonb;
  v_index int;
  v_refused boolean;
  v_counted jsonb;
  v_row jsonb;
  v_seq bigint;
  v_first_seq bigint;
  v_last_seq bigint;
  v_count int := 0;
BEGIN
  -- The put-order row first: it serialises batches, whatever windows they touch. The batch
  -- reserves its stamps there at once: v_stamp + 1 ... v_stamp + n, never behind the clock.
  UPDATE svc_rate_counters SET hits = hits + jsonb_array_length(p_puts), amount = greatest(amount, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1) + jsonb_array_length(p_puts)
    WHERE bucket = order_bucket AND window_start = 'epoch'::timestamptz RETURNING amount - jsonb_array_length(p_puts) INTO v_stamp;
  IF NOT FOUND THEN
    -- First put ever (or someone removed the row): start after every stored item.
    INSERT INTO svc_rate_counters (bucket, window_start, hits, amount)
      VALUES (order_bucket, 'epoch'::timestamptz, 0, coalesce(floor(extract(epoch FROM (SELECT max(created_at) FROM blackboard_items)) * 1000)::bigint, 0))
      ON CONFLICT (bucket, window_start) DO NOTHING;
    UPDATE svc_rate_counters SET hits = hits + jsonb_array_length(p_puts), amount = greatest(amount, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1) + jsonb_array_length(p_puts)
      WHERE bucket = order_bucket AND window_start = 'epoch'::timestamptz RETURNING amount - jsonb_array_length(p_puts) INTO v_stamp;
  END IF;

  -- Count the whole batch in every window at once (locking the rows in bucket order), and see
  -- whether every window takes all of it. Counters only grow and a window's cap is the same for
  -- every put of the batch, so then every put fits where it stands in the batch.
  WITH totals AS (
    SELECT w->>'bucket' AS bucket, count(*) AS hits, sum((w->>'amount')::bigint) AS amount, max((w->>'max_hits')::bigint) AS max_hits, max((w->>'max_amount')::bigint) AS max_amount
    FROM jsonb_array_elements(p_puts) AS p, jsonb_array_elements(p->'windows') AS w GROUP BY 1
  ), counted AS (
    INSERT INTO svc_rate_counters (bucket, window_start, hits, amount)
      SELECT bucket, p_window_start, hits, amount FROM totals ORDER BY bucket
      ON CONFLICT (bucket, window_start) DO UPDATE SET hits = svc_rate_counters.hits + EXCLUDED.hits, amount = svc_rate_counters.amount + EXCLUDED.amount
      RETURNING bucket, hits, amount
  )
  SELECT array_agg(counted.bucket ORDER BY counted.bucket), array_agg(counted.hits - totals.hits ORDER BY counted.bucket), array_agg(counted.amount - totals.amount ORDER BY counted.bucket),
      bool_and(counted.hits <= totals.max_hits AND counted.amount <= totals.max_amount)
    INTO v_buckets, v_hits, v_amounts, v_fits
    FROM counted JOIN totals USING (bucket);

  IF v_fits THEN
    -- Every put is admitted: insert them all in one statement, then give back the counts of any
    -- put a live item with the same idempotency identity beat (a race; the caller replays it).
    WITH input AS (
      SELECT value AS put, ordinality FROM jsonb_array_elements(p_puts) WITH ORDINALITY
    ), inserted AS (
      INSERT INTO blackboard_items (id, key, task, kind, topics, parent_id, artifact_id, revision, runtime_versions, text, item, value_bytes, key_id, idempotency_key, request_hash, edit_token_hash, created_at, expires_at)
        SELECT put->>'id', put->>'key', put->>'task', put->>'kind', ARRAY(SELECT jsonb_array_elements_text(put->'topics')), put->>'parent_id', put->>'artifact_id', put->>'revision',
          CASE WHEN jsonb_typeof(put->'runtime_versions') = 'array' THEN put->'runtime_versions' END, put->>'text', put->'item', (put->>'value_bytes')::int,
          put->>'key_id', put->>'idempotency_key', put->>'request_hash', put->>'edit_token_hash',
          to_timestamp((v_stamp + ordinality) / 1000.0), to_timestamp((v_stamp + ordinality) / 1000.0) + make_interval(secs => (put->>'ttl_seconds')::int)
        FROM input ORDER BY ordinality
        ON CONFLICT (key_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING id, key, item, created_at, expires_at, tombstoned_at, runtime_versions, seq
    ), retired AS (
      DELETE FROM blackboard_items WHERE seq > (SELECT min(seq) FROM inserted) - p_retention - 64 AND seq <= (SELECT max(seq) FROM inserted) - p_retention
    )
    SELECT jsonb_agg(CASE WHEN inserted.id IS NULL THEN jsonb_build_object('race', true)
        ELSE jsonb_build_object('inserted', jsonb_build_object('id', inserted.id, 'key', inserted.key, 'item', inserted.item, 'created_at', inserted.created_at, 'expires_at', inserted.expires_at, 'tombstoned_at', inserted.tombstoned_at, 'runtime_versions', inserted.runtime_versions)) END
        ORDER BY input.ordinality),
      count(*) FILTER (WHERE inserted.id IS NULL)
      INTO v_results, v_raced
      FROM input LEFT JOIN inserted ON inserted.id = input.put->>'id';
    IF v_raced > 0 THEN
      UPDATE svc_rate_counters AS counter SET hits = counter.hits - raced.hits, amount = counter.amount - raced.amount
        FROM (SELECT w->>'bucket' AS bucket, count(*) AS hits, sum((w->>'amount')::bigint) AS amount
              FROM jsonb_array_elements(v_results) WITH ORDINALITY AS r (result, ordinality)
              JOIN jsonb_array_elements(p_puts) WITH ORDINALITY AS p (put, ordinality) USING (ordinality),
              jsonb_array_elements(p.put->'windows') AS w
              WHERE r.result ? 'race' GROUP BY 1) AS raced
        WHERE counter.window_start = p_window_start AND counter.bucket = raced.bucket;
    END IF;
    RETURN v_results;
  END IF;

  -- Some window cannot take the whole batch: decide put by put, in arrival order, from the
  -- counts as they stood before the batch (v_hits, v_amounts), then write the counts back.
  v_results := '[]'::jsonb;
  FOR v_put IN SELECT value FROM jsonb_array_elements(p_puts) LOOP
    v_refused := false;
    v_counted := '[]'::jsonb;
    FOR v_window IN SELECT value FROM jsonb_array_elements(v_put->'windows') LOOP
      v_index := array_position(v_buckets, v_window->>'bucket');
      v_counted := v_counted || jsonb_build_object('bucket', v_window->>'bucket', 'hits', v_hits[v_index] + 1, 'amount', v_amounts[v_index] + (v_window->>'amount')::bigint);
      IF v_hits[v_index] + 1 > (v_window->>'max_hits')::bigint OR v_amounts[v_index] + (v_window->>'amount')::bigint > (v_window->>'max_amount')::bigint THEN
        v_refused := true;
      END IF;
    END LOOP;
    IF v_refused THEN
      v_results := v_results || jsonb_build_array(jsonb_build_object('refused', v_counted));
      CONTINUE;
    END IF;

    v_stamp := v_stamp + 1;
    v_row := NULL;
    INSERT INTO blackboard_items (id, key, task, kind, topics, parent_id, artifact_id, revision, runtime_versions, text, item, value_bytes, key_id, idempotency_key, request_hash, edit_token_hash, created_at, expires_at)
      VALUES (v_put->>'id', v_put->>'key', v_put->>'task', v_put->>'kind', ARRAY(SELECT jsonb_array_elements_text(v_put->'topics')), v_put->>'parent_id', v_put->>'artifact_id', v_put->>'revision',
        CASE WHEN jsonb_typeof(v_put->'runtime_versions') = 'array' THEN v_put->'runtime_versions' END, v_put->>'text', v_put->'item', (v_put->>'value_bytes')::int,
        v_put->>'key_id', v_put->>'idempotency_key', v_put->>'request_hash', v_put->>'edit_token_hash',
        to_timestamp(v_stamp / 1000.0), to_timestamp(v_stamp / 1000.0) + make_interval(secs => (v_put->>'ttl_seconds')::int))
      ON CONFLICT (key_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING jsonb_build_object('id', id, 'key', key, 'item', item, 'created_at', created_at, 'expires_at', expires_at, 'tombstoned_at', tombstoned_at, 'runtime_versions', runtime_versions), seq
      INTO v_row, v_seq;
    IF v_row IS NULL THEN
      v_results := v_results || jsonb_build_array(jsonb_build_object('race', true));
      CONTINUE;
    END IF;
    FOR v_window IN SELECT value FROM jsonb_array_elements(v_put->'windows') LOOP
      v_index := array_position(v_buckets, v_window->>'bucket');
      v_hits[v_index] := v_hits[v_index] + 1;
      v_amounts[v_index] := v_amounts[v_index] + (v_window->>'amount')::bigint;
    END LOOP;
    v_first_seq := coalesce(v_first_seq, v_seq);
    v_last_seq := v_seq;
    v_count := v_count + 1;
    v_results := v_results || jsonb_build_array(jsonb_build_object('inserted', v_row));
  END LOOP;

  UPDATE svc_rate_counters AS counter SET hits = counted.hits, amount = counted.amount
    FROM unnest(v_buckets, v_hits, v_amounts) AS counted (bucket, hits, amount)
    WHERE counter.window_start = p_window_start AND counter.bucket = counted.bucket;
  IF v_count > 0 THEN
    DELETE FROM blackboard_items WHERE seq > v_first_seq - p_retention - 64 AND seq <= v_last_seq - p_retention;
  END IF;
  RETURN v_results;
END
$$`;

/** The per-put statement raised through this function to roll itself back; batches need no such thing. */
const restoreRefuseFunction = `CREATE OR REPLACE FUNCTION svc_blackboard_refuse(detail text) RETURNS boolean LANGUAGE plpgsql AS $$
     BEGIN
       RAISE EXCEPTION USING ERRCODE = 'SVB01', MESSAGE = 'blackboard put refused', DETAIL = detail;
     END
     $$`;

export default sqlMigration(
  '20261121T1500-blackboard-put-batch',
  [createBatchFunction, 'DROP FUNCTION IF EXISTS svc_blackboard_refuse(text)'],
  ['DROP FUNCTION IF EXISTS svc_blackboard_put_batch(jsonb, timestamptz, bigint)', restoreRefuseFunction],
);
