import { type BlackboardReadPage, type BlackboardRecord, blackboardContract } from '@svc/schemas';
import { useState } from 'preact/hooks';
import { clientFor } from '../api.ts';
import { ErrorNote } from '../components/error-note.tsx';
import { Required } from '../components/required.tsx';
import { PostCard } from '../components/post-card.tsx';
import { useFirstPaintHandover } from '../first-paint-handover.ts';
import { useLoad, useTitle } from '../hooks.ts';
import { channelHref, postHref } from '../links.ts';

/** Replies read per page: the contract's most for one read. */
const REPLIES_PER_PAGE = 200;

type Earlier = { before: string; before_id: string } | null;

/**
 * One post, its thread (the post and every reply below it, depth bounded by the server), and
 * retraction. The newest page of replies comes first; a longer thread says so and loads its
 * earlier replies page by page (the read's `history_next`), so no reply is out of reach.
 */
export function ItemPage({ id }: { id: string }) {
  useTitle(`Post ${id}`);
  const [earlierPages, setEarlierPages] = useState<{ replies: BlackboardRecord[]; earlier: Earlier }[]>([]);
  const [loadingEarlier, setLoadingEarlier] = useState<{ state: 'idle' | 'loading' } | { state: 'failed'; error: unknown }>({ state: 'idle' });
  const [loaded] = useLoad(
    async (signal) => {
      setEarlierPages([]);
      const board = await clientFor({ blackboard: blackboardContract });
      const [record, thread] = await Promise.all([
        board.blackboard.show({ params: { id } }, { signal }),
        board.blackboard.query({ query: { thread_id: id, limit: REPLIES_PER_PAGE } }, { signal }),
      ]);
      return { record, ...threadReplies(id, thread) };
    },
    [id],
  );
  // Where the next earlier page starts: the last page read says, and null once the thread's start is reached.
  const earliest = earlierPages.length > 0 ? earlierPages.at(-1)!.earlier : loaded.state === 'done' ? loaded.value.earlier : null;
  const loadEarlier = async () => {
    if (!earliest) return;
    setLoadingEarlier({ state: 'loading' });
    try {
      const board = await clientFor({ blackboard: blackboardContract });
      const page = await board.blackboard.query({ query: { thread_id: id, limit: REPLIES_PER_PAGE, ...earliest } });
      setEarlierPages((pages) => [...pages, threadReplies(id, page)]);
      setLoadingEarlier({ state: 'idle' });
    } catch (error) {
      setLoadingEarlier({ state: 'failed', error });
    }
  };
  useFirstPaintHandover(loaded.state !== 'loading');
  const replies = loaded.state === 'done' ? [...[...earlierPages].reverse().flatMap((page) => page.replies), ...loaded.value.replies] : [];
  return (
    <>
      <h1>Post</h1>
      {loaded.state === 'loading' && <p>Loading…</p>}
      {loaded.state === 'failed' && <ErrorNote error={loaded.error} />}
      {loaded.state === 'done' && (
        <>
          <ThreadOpening record={loaded.value.record} />
          <section aria-labelledby="thread-heading">
            <h2 id="thread-heading">{repliesHeading(replies.length, earliest !== null)}</h2>
            {earliest && (
              <p>
                <button type="button" onClick={loadEarlier} disabled={loadingEarlier.state === 'loading'}>
                  {loadingEarlier.state === 'loading' ? 'Loading earlier replies…' : 'Load earlier replies'}
                </button>
              </p>
            )}
            {loadingEarlier.state === 'failed' && <ErrorNote error={loadingEarlier.error} />}
            <ThreadReplies tree={threadTree(id, replies)} parentId={id} texts={textsOf(loaded.value.record, replies)} />
          </section>
          <RetractForm id={id} />
        </>
      )}
    </>
  );
}

/**
 * The replies as a tree: each under its parent when the parent is loaded, else at the top (the
 * root's own replies, and replies to an earlier reply not loaded yet). Order stays oldest first.
 */
export function threadTree(rootId: string, replies: BlackboardRecord[]): Map<string, BlackboardRecord[]> {
  const loaded = new Set(replies.map((reply) => reply.id));
  const children = new Map<string, BlackboardRecord[]>();
  for (const reply of replies) {
    const parent = typeof reply.item.parent_id === 'string' && loaded.has(reply.item.parent_id) ? reply.item.parent_id : rootId;
    children.set(parent, [...(children.get(parent) ?? []), reply]);
  }
  return children;
}

/** The post a thread opens with, and where it was posted: drawn by the page, and by the server in the first response (first-paint.tsx). */
export function ThreadOpening({ record }: { record: BlackboardRecord }) {
  return (
    <>
      <p>
        In channel <a href={channelHref(record.key)}>{record.key}</a> · <a href={postHref({ key: record.key, parent_id: record.id })}>Reply</a>
      </p>
      <PostCard record={record} showChannel={false} />
    </>
  );
}

/** The replies' heading: a thread with earlier replies not read yet says how many of the newest it shows. */
export const repliesHeading = (shown: number, earlierUnread: boolean) => (earlierUnread ? `Replies: the newest ${shown} shown` : `Replies (${shown})`);

/** A thread's first page read by `thread_id` (newest first, the root among them): its replies oldest first, and where earlier ones start. */
export function threadReplies(rootId: string, page: BlackboardReadPage): { replies: BlackboardRecord[]; earlier: Earlier } {
  return { replies: page.items.filter((reply) => reply.id !== rootId).reverse(), earlier: (page.has_more ? page.history_next : null) as Earlier };
}

export const textsOf = (record: BlackboardRecord, replies: BlackboardRecord[]) => new Map([record, ...replies].map((post) => [post.id, post.item.text]));

/** One level of the thread, each reply with its own replies nested below it, as GitHub lays out a discussion. */
export function ThreadReplies({ tree, parentId, texts }: { tree: Map<string, BlackboardRecord[]>; parentId: string; texts: Map<string, string> }) {
  const replies = tree.get(parentId) ?? [];
  if (replies.length === 0) return null;
  return (
    <ol class="thread">
      {replies.map((reply) => {
        const parent = typeof reply.item.parent_id === 'string' ? reply.item.parent_id : undefined;
        return (
          <li key={reply.id}>
            <PostCard record={reply} parentText={parent === undefined ? undefined : texts.get(parent)} />
            <ThreadReplies tree={tree} parentId={reply.id} texts={texts} />
          </li>
        );
      })}
    </ol>
  );
}

/** Retracts a post with the edit token its author was shown once; the token is sent in the body, never in the address. */
export function RetractForm({ id, onRetracted, token = '' }: { id: string; onRetracted?: () => void; token?: string }) {
  const [outcome, setOutcome] = useState<{ state: 'idle' | 'done' } | { state: 'failed'; error: unknown }>({ state: 'idle' });
  const submit = async (event: Event) => {
    event.preventDefault();
    const editToken = String(new FormData(event.currentTarget as HTMLFormElement).get('edit_token') ?? '');
    try {
      const board = await clientFor({ blackboard: blackboardContract });
      await board.blackboard.tombstone({ body: { id, edit_token: editToken } });
      setOutcome({ state: 'done' });
      onRetracted?.();
    } catch (error) {
      setOutcome({ state: 'failed', error });
    }
  };
  return (
    <section aria-labelledby={`retract-${id}`} class="panel">
      <h2 id={`retract-${id}`}>Retract this post</h2>
      <form onSubmit={submit}>
        <label>
          <span>
            Edit token <Required />
          </span>
          <input name="edit_token" type="password" autoComplete="off" required maxLength={200} defaultValue={token} />
        </label>
        <button type="submit">Retract</button>
      </form>
      {outcome.state === 'done' && <p role="status">Retracted: the post is hidden on the board. Copies others already made are not erased.</p>}
      {outcome.state === 'failed' && <ErrorNote error={outcome.error} />}
    </section>
  );
}
