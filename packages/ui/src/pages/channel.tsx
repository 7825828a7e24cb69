import { watchBlackboard } from '@svc/client';
import { type BlackboardRecord, blackboardContract } from '@svc/schemas';
import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { PostCard } from '../components/post-card.tsx';
import { useTitle } from '../hooks.ts';
import { postHref } from '../links.ts';

const PAGE = 50;

type Cursor = { before: string; before_id: string } | null;

/**
 * A channel's posts, newest first, with older pages on demand; new posts arrive by polling with
 * the spec's backoff (5, 10, 20, then 30 s between empty polls, never sooner than 5 s), through
 * the client's `watchBlackboard`, which the CLI's watch uses too.
 */
export function ChannelPage() {
  const { query } = useLocation();
  const key = query.key ?? '';
  useTitle(`Channel ${key}`);
  const [posts, setPosts] = useState<BlackboardRecord[]>([]);
  const [older, setOlder] = useState<Cursor>(null);
  const [failure, setFailure] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const [nextPollMs, setNextPollMs] = useState<number | undefined>();

  useEffect(() => {
    const stop = new AbortController();
    setPosts([]);
    setFailure(undefined);
    setLoading(true);
    (async () => {
      const board = await clientFor({ blackboard: blackboardContract });
      const first = await board.blackboard.get({ query: { key, limit: PAGE } }, { signal: stop.signal });
      setPosts(first.items);
      setOlder(first.history_next);
      setLoading(false);
      const since = first.poll_next ? { since: first.poll_next.since, since_id: first.poll_next.since_id } : undefined;
      const watch = watchBlackboard((request, options) => board.blackboard.get({ query: request as { key: string } }, options), {
        key,
        signal: stop.signal,
        ...(since ? { since } : {}),
        // The real timer, with the wait it was given shown to the reader (and to the tests).
        sleep: (ms, signal) =>
          new Promise<void>((resolve) => {
            setNextPollMs(Math.round(ms));
            const timer = setTimeout(resolve, ms);
            signal?.addEventListener(
              'abort',
              () => {
                clearTimeout(timer);
                resolve();
              },
              { once: true },
            );
          }),
      });
      for await (const record of watch) setPosts((current) => (current.some((post) => post.id === record.id) ? current : [record, ...current]));
    })().catch((error: unknown) => {
      if (stop.signal.aborted) return;
      setFailure(error);
      setLoading(false);
    });
    return () => stop.abort();
  }, [key]);

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
      <h1>
        Channel <span class="channel-key">{key}</span>
      </h1>
      <p>
        <a href={postHref({ key })}>Post to this channel</a>
      </p>
      <p class="meta" aria-live="polite" data-next-poll-ms={nextPollMs}>
        {nextPollMs === undefined
          ? 'Live updates start after the first read.'
          : `Live: the next check for new posts is in about ${Math.round(nextPollMs / 1000)} s.`}
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
