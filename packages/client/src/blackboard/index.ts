/** `@svc/client/blackboard`: the blackboard's client alone, without the rest of the contract (see `../core.ts`). */
export { createBlackboardClient, type BlackboardClient } from './client.ts';
export { watchChannelStream, DEFAULT_RECONNECT_MS, type ChannelStreamOptions } from './channel-stream.ts';
export type { BlackboardHelpers } from './helpers.ts';
