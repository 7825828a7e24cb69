import { sqlMigration } from './types.ts';

/**
 * Lets a put statement abort itself: a put runs as one autocommitted statement (so it holds
 * its counter row locks only while it executes), and a refused or raced put must leave no
 * trace, so the statement calls this to raise and roll its own transaction back. The detail
 * carries what the server needs to name the refusal.
 */
export default sqlMigration(
  '20261121T1401-blackboard-refuse',
  [
    `CREATE OR REPLACE FUNCTION svc_blackboard_refuse(detail text) RETURNS boolean LANGUAGE plpgsql AS $$
     BEGIN
       RAISE EXCEPTION USING ERRCODE = 'SVB01', MESSAGE = 'blackboard put refused', DETAIL = detail;
     END
     $$`,
  ],
  ['DROP FUNCTION IF EXISTS svc_blackboard_refuse(text)'],
);
