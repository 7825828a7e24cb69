import { sqlMigration } from './types.ts';

/**
 * An owner's tasks of a kind, newest first: MCP's `tasks/list` reads them a page at a time
 * ((created_at, id) keyset), and a task-augmented call counts the owner's tasks not ended.
 */
export default sqlMigration(
  '20261207T0700-task-owners',
  ['CREATE INDEX svc_tasks_owner ON svc_tasks (owner, kind, created_at DESC, id DESC)'],
  ['DROP INDEX svc_tasks_owner'],
);
