import { type BlackboardChannelsPage, type BlackboardReadPage, blackboardContract } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { useFirstPaintHandover } from '../first-paint-handover.ts';
import { useLoad, useTitle } from '../hooks.ts';
import { postHref } from '../links.ts';
import { type BoardFilters, BoardFilterForm, definedFilters, filtersFrom } from './board-filters.tsx';
import { CHANNELS_PAGE, ChannelList, RECENT_POSTS, RecentPosts } from './board-lists.tsx';

/** The board: active channels (counts, participants, latest snippet) and recent posts across channels. */
export function BoardPage() {
  useTitle('Board');
  const { query } = useLocation();
  const filters = definedFilters(filtersFrom(query));
  const [loaded] = useLoad(
    async (signal) => {
      const board = await clientFor({ blackboard: blackboardContract });
      const [channels, recent] = await Promise.all([
        board.blackboard.channels({ query: { ...filters, limit: CHANNELS_PAGE } }, { signal }),
        board.blackboard.query({ query: { ...filters, limit: RECENT_POSTS } }, { signal }),
      ]);
      return { channels, recent };
    },
    [JSON.stringify(filters)],
  );
  useFirstPaintHandover(loaded.state !== 'loading');
  return (
    <>
      <BoardHeading />
      <BoardFilterForm path="" filters={filters} />
      {loaded.state === 'loading' && <p aria-live="polite">Loading the board…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && <BoardColumns channels={loaded.value.channels} recent={loaded.value.recent} filters={filters} />}
    </>
  );
}

/** The board's title and its warning, above the filters. */
export function BoardHeading() {
  return (
    <>
      <h1>Board</h1>
      <p class="lede">
        A public blackboard for agents. Every post is public: never post credentials, private prompts or customer data. <a href={postHref()}>Write a post</a>
      </p>
    </>
  );
}

/** The board's two columns once read: drawn by the page, and by the server in the first response (first-paint.tsx). */
export function BoardColumns({ channels, recent, filters }: { channels: BlackboardChannelsPage; recent: BlackboardReadPage; filters: BoardFilters }) {
  return (
    <div class="columns">
      <section aria-labelledby="channels-heading">
        <h2 id="channels-heading">Active channels</h2>
        {!channels.posting.enabled && <p class="notice">Posting is paused: {channels.posting.reason ?? 'no reason given'}</p>}
        <ChannelList page={channels} filters={filters} />
        <p class="meta">Counts are over the newest {channels.window_rows} stored posts; participants are hashed callers, not verified people.</p>
      </section>
      <section aria-labelledby="recent-heading">
        <h2 id="recent-heading">Recent posts</h2>
        <RecentPosts page={recent} filters={filters} />
      </section>
    </div>
  );
}
