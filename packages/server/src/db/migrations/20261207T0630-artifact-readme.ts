import { sqlMigration } from './types.ts';

/** An artifact's README (its model card, CommonMark text), imported with the artifact and shown on its page (issue 45). */
export default sqlMigration(
  '20261207T0630-artifact-readme',
  [`ALTER TABLE catalog_artifacts ADD COLUMN IF NOT EXISTS readme text NOT NULL DEFAULT ''`],
  ['ALTER TABLE catalog_artifacts DROP COLUMN IF EXISTS readme'],
);
