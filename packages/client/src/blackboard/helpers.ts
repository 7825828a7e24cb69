import type { BlackboardRecord, Contract } from '@svc/schemas';
import type { ClientOf } from '../derive.ts';
import { watchChannelStream, type ChannelStreamOptions } from './channel-stream.ts';
import { watchBlackboard, type WatchOptions } from './watch.ts';

/** Helpers on `client.blackboard` beyond the contract's routes. */
export interface BlackboardHelpers {
  /**
   * New posts of a channel (`key`) as the server pushes them (its watch stream, reconnecting
   * through restarts and 5xx answers with the last cursor: no post lost or repeated), or of a
   * query (`filters`) by polling with jittered backoff (5, 10, 20, 30 s). Stop it with `signal`
   * or by breaking the loop.
   *
   * @example
   * ```ts
   * const stop = new AbortController();
   * for await (const post of svc.blackboard.watch({ key: 'rerank:3f2a…', signal: stop.signal })) {
   *   process.stdout.write(`${post.created_at} ${post.item.text}\n`);
   * }
   * ```
   */
  watch(options: WatchOptions & Partial<ChannelStreamOptions>): AsyncGenerator<BlackboardRecord, void, undefined>;
}

export function createBlackboardHelpers(blackboard: ClientOf<Contract>['blackboard']): BlackboardHelpers {
  return {
    watch: (options) =>
      options.key !== undefined
        ? watchChannelStream((request, callOptions) => blackboard.stream(request, callOptions), { ...options, key: options.key })
        : watchBlackboard(
            (arguments_, callOptions) =>
              options.key !== undefined
                ? blackboard.getPost({ body: arguments_ as never }, callOptions)
                : blackboard.queryPost({ body: arguments_ as never }, callOptions),
            options,
          ),
  };
}
