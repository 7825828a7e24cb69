import { sqlMigration } from './types.ts';

/**
 * A completion retried after its answer was lost must get the first record back, so the token
 * remembers the pull it recorded (or found already recorded): its id and when it was recorded.
 */
export default sqlMigration(
  '20261122T1900-completion-retry',
  [
    'ALTER TABLE catalog_completion_tokens ADD COLUMN IF NOT EXISTS recorded_at timestamptz',
    'ALTER TABLE catalog_completion_tokens ADD COLUMN IF NOT EXISTS recorded_pull_id text',
  ],
  ['ALTER TABLE catalog_completion_tokens DROP COLUMN IF EXISTS recorded_pull_id', 'ALTER TABLE catalog_completion_tokens DROP COLUMN IF EXISTS recorded_at'],
);
