import { sqlMigration } from './types.ts';

/**
 * `notifications/cancelled` for a tool call that is not running on the replica that received it
 * (a stateless MCP client sends the notification as a request of its own, which a load balancer
 * may hand to any replica). The replica running the call polls for its callers' rows while it has
 * calls in flight (as a running A2A task polls `cancel_requested`).
 *
 * - `caller`: who may cancel (principal and address, features/mcp/endpoint.ts `callerKey`).
 * - `request_id`: the JSON-RPC id of the call, as text.
 * - `cancelled_at`: when the notification arrived; a call started well after it is not the one it
 *   named (clients reuse ids across sessions). Rows are pruned after an hour.
 */
export default sqlMigration(
  '20261127T0400-mcp-cancelled-calls',
  [
    `CREATE TABLE mcp_cancelled_calls (
       caller text NOT NULL,
       request_id text NOT NULL,
       cancelled_at timestamptz NOT NULL,
       PRIMARY KEY (caller, request_id)
     )`,
    'CREATE INDEX mcp_cancelled_calls_by_age ON mcp_cancelled_calls (cancelled_at)',
  ],
  ['DROP TABLE mcp_cancelled_calls'],
);
