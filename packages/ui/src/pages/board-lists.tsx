import { type BlackboardChannelsPage, type BlackboardReadPage, blackboardContract } from '@svc/schemas';
import { useMemo } from 'preact/hooks';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { MarkedText } from '../components/marked-text.tsx';
import { PostCard } from '../components/post-card.tsx';
import { BASE, channelHref, itemHref, postHref } from '../links.ts';
import type { BoardFilters } from './board-filters.tsx';
import { type HistoryCursor, useMorePages } from './more-pages.ts';

export const CHANNELS_PAGE = 20;
export const RECENT_POSTS = 20;

/** "Load more": reads the list's next page; gone once the server says there is none (`has_more` false). Its name stays while it reads (aria-busy says so), so focus and screen readers keep it. */
function MoreButton({ label, busy, onClick }: { label: string; busy: boolean; onClick: () => void }) {
  return (
    <button type="button" class="load-more" onClick={onClick} disabled={busy} aria-busy={busy}>
      {label}
    </button>
  );
}

/** The active channels matching the filters, a page at a time. */
export function ChannelList({ page, filters }: { page: BlackboardChannelsPage; filters: BoardFilters }) {
  const first = useMemo(() => ({ items: page.channels, next: page.has_more ? page.history_next : null }), [page]);
  const more = useMorePages(
    first,
    async (cursor: HistoryCursor) => {
      const board = await clientFor({ blackboard: blackboardContract });
      const next = await board.blackboard.channels({ query: { ...filters, ...cursor, limit: CHANNELS_PAGE } });
      return { items: next.channels, next: next.has_more ? next.history_next : null };
    },
    (channel) => channel.key,
  );
  if (more.items.length === 0)
    return (
      <p data-testid="empty-channels">
        No active channel matches. <a href={BASE}>Clear the filters</a>, or <a href={postHref()}>write the first post</a> of a channel.
      </p>
    );
  return (
    <>
      <ul class="channel-list">
        {more.items.map((channel) => (
          <li key={channel.key} class="channel">
            <a href={channelHref(channel.key)} class="channel-key">
              {channel.key}
            </a>
            <p class="meta">
              {channel.posts} {channel.posts === 1 ? 'post' : 'posts'} · {channel.participants} {channel.participants === 1 ? 'participant' : 'participants'} ·{' '}
              <a href={itemHref(channel.latest.id)}>
                latest <time dateTime={channel.latest.created_at}>{new Date(channel.latest.created_at).toLocaleString()}</time>
              </a>
            </p>
            <p class="snippet">
              <MarkedText text={channel.latest.snippet} />
            </p>
            {channel.topics.length > 0 && (
              <ul class="topics" aria-label="Topics">
                {channel.topics.map((topic) => (
                  <li key={topic}>{topic}</li>
                ))}
              </ul>
            )}
          </li>
        ))}
      </ul>
      {more.failure !== undefined && <ErrorNote error={more.failure} />}
      {more.next && <MoreButton label="Load more channels" busy={more.busy} onClick={more.loadMore} />}
    </>
  );
}

/** Recent posts across channels matching the filters, newest first, a page at a time. */
export function RecentPosts({ page, filters }: { page: BlackboardReadPage; filters: BoardFilters }) {
  const first = useMemo(() => ({ items: page.items, next: page.has_more ? page.history_next : null }), [page]);
  const more = useMorePages(
    first,
    async (cursor: HistoryCursor) => {
      const board = await clientFor({ blackboard: blackboardContract });
      const next = await board.blackboard.query({ query: { ...filters, ...cursor, limit: RECENT_POSTS } });
      return { items: next.items, next: next.has_more ? next.history_next : null };
    },
    (record) => record.id,
  );
  if (more.items.length === 0)
    return (
      <p data-testid="empty-posts">
        No posts match. <a href={postHref()}>Write one</a>: it appears here once posted.
      </p>
    );
  return (
    <>
      {more.items.map((record) => (
        <PostCard key={record.id} record={record} />
      ))}
      {more.failure !== undefined && <ErrorNote error={more.failure} />}
      {more.next && <MoreButton label="Load more posts" busy={more.busy} onClick={more.loadMore} />}
    </>
  );
}
