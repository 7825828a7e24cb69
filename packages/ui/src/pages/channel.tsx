import { watchChannelStream } from '@svc/client';
import { type BlackboardRecord, blackboardContract } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { PostCard } from '../components/post-card.tsx';
import { useFirstPaintHandover } from '../first-paint-handover.ts';
import { useTitle } from '../hooks.ts';
import { postHref } from '../links.ts';

const PAGE = 50;

type Cursor = { before: string; before_id: string } | null;

/**
 * A channel's posts, newest first, with older pages on demand; new posts arrive as they are made
 * through the channel's push stream (`GET /api/v1/blackboard/watch`, the client's
 * `watchChannelStream`, which `svc board watch` uses too). The stream starts at the first page's
 * `poll_next`, so a post made between the read and the stream's start is not missed, and it resumes
 * with `Last-Event-ID` after a cut, so none is repeated; a post already shown is never added twice.
 */
export function ChannelPage() {
  const { query } = useLocation();
  const key = query.key ?? '';
  useTitle(`Channel ${key}`);
  const [posts, setPosts] = useState<BlackboardRecord[]>([]);
  const [older, setOlder] = useState<Cursor>(null);
  const [failure, setFailure] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [live, setLive] = useState<'waiting' | 'live' | 'reconnecting'>('waiting');

  useEffect(() => {
    const stop = new AbortController();
    setPosts([]);
    setFailure(undefined);
    setLoading(true);
    setLive('waiting');
    (async () => {
      const board = await clientFor({ blackboard: blackboardContract });
      const first = await board.blackboard.get({ query: { key, limit: PAGE } }, { signal: stop.signal });
      setPosts(first.items);
      setOlder(first.history_next);
      setLoading(false);
      const since = first.poll_next ? { since: first.poll_next.since, since_id: first.poll_next.since_id } : undefined;
      const watch = watchChannelStream((request, options) => board.blackboard.stream(request, options), {
        key,
        signal: stop.signal,
        ...(since ? { since } : {}),
        onCursor: () => setLive('live'),
        onReconnect: () => setLive('reconnecting'),
      });
      for await (const record of watch) setPosts((current) => (current.some((post) => post.id === record.id) ? current : [record, ...current]));
    })().catch((error: unknown) => {
      if (stop.signal.aborted) return;
      setFailure(error);
      setLoading(false);
    });
    return () => stop.abort();
  }, [key]);

  useFirstPaintHandover(!loading);

  const loadOlder = async () => {
    if (!older) return;
    try {
      const board = await clientFor({ blackboard: blackboardContract });
      const page = await board.blackboard.get({ query: { key, limit: PAGE, ...older } });
      setPosts((current) => [...current, ...page.items.filter((record) => !current.some((post) => post.id === record.id))]);
      setOlder(page.history_next);
    } catch (error) {
      setFailure(error);
    }
  };

  return (
    <>
      <ChannelHeading channelKey={key} />
      <p class="meta" aria-live="polite" data-live={live}>
        {live === 'live'
          ? 'Live: new posts appear here as they are posted.'
          : live === 'reconnecting'
            ? 'Live updates are reconnecting…'
            : 'Live updates start after the first read.'}
      </p>
      {failure !== undefined && <ErrorNote error={failure} />}
      {loading ? (
        <p>Loading posts…</p>
      ) : posts.length === 0 ? (
        <p data-testid="empty-channel">
          No live posts in this channel yet. <a href={postHref({ key })}>Write the first one</a>: this page shows it within seconds.
        </p>
      ) : (
        posts.map((record) => <PostCard key={record.id} record={record} showChannel={false} />)
      )}
      {older && (
        <button type="button" onClick={loadOlder}>
          Older posts
        </button>
      )}
    </>
  );
}

/** The channel's title and where to post to it: drawn by the page, and by the server in the first response (first-paint.tsx). */
export function ChannelHeading({ channelKey }: { channelKey: string }) {
  return (
    <>
      <h1>
        Channel <span class="channel-key">{channelKey}</span>
      </h1>
      <p>
        <a href={postHref({ key: channelKey })}>Post to this channel</a>
      </p>
    </>
  );
}
