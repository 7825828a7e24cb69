/**
 * The server's first paint of a public page (issue 45): the board's channels and recent posts, a
 * channel's posts, a thread, an artifact's model card, drawn as HTML into the first response by
 * svc-server (packages/server/src/console/first-paint.ts loads this module's build), so the
 * content is on screen before, and without, any script. It draws the app's own components
 * (PostCard, MarkedText's spoofing marks, ModelCard), so the server and the browser mark hidden
 * characters and render a card the one same way. The app takes over once its page has its
 * content (first-paint-handover.ts). Built by `vite build --ssr` (vite.config.ts).
 */
import type { Artifact, BlackboardChannelsPage, BlackboardReadPage, BlackboardRecord } from '@svc/schemas';
import type { ComponentChildren } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { hiddenCharacterCount } from './components/marked-text.tsx';
import { ModelCardRenderer } from './components/model-card.tsx';
import { modelCardHtml } from './components/model-card-html.ts';
import { PostCard } from './components/post-card.tsx';
import { type NavigationEntry, TopHeader } from './components/top-header.tsx';
import { BASE } from './links.ts';
import { isCurrentPage, NAVIGATION } from './navigation.ts';
import { ArtifactIntro } from './pages/artifact.tsx';
import { BoardColumns, BoardHeading } from './pages/board.tsx';
import { definedFilters, filtersFrom } from './pages/board-filters.tsx';
import { ChannelHeading } from './pages/channel.tsx';
import { repliesHeading, ThreadOpening, ThreadReplies, textsOf, threadReplies, threadTree } from './pages/item.tsx';

/** The answers the server read for the page (packages/server/src/console/first-load.ts), by the name of the read; one left out is absent. */
export interface FirstPaintReads {
  channels?: BlackboardChannelsPage;
  recent?: BlackboardReadPage;
  posts?: BlackboardReadPage;
  record?: BlackboardRecord;
  thread?: BlackboardReadPage;
  artifact?: Artifact;
}

/** The page as an anonymous visitor sees it: the console's header (no session yet) and the page's content. */
function Shell({ path, children }: { path: string; children: ComponentChildren }) {
  const Link = ({ href, label, also }: NavigationEntry) => (
    <a href={href} aria-current={isCurrentPage(path, href, also) ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <div id="first-paint">
      <TopHeader
        entries={NAVIGATION}
        link={Link}
        session={
          <p class="session">
            <a href={`${BASE}sign-in`}>Sign in</a>
          </p>
        }
      />
      <main>{children}</main>
    </div>
  );
}

/**
 * What the server draws of one page. The drawing runs in a worker thread under a deadline
 * (packages/server/src/console/first-paint.ts: 200 ms, past it the page is served without a first
 * paint), so this is the second guard: it refuses at once, for the cost of one linear pass, what
 * would only run into the deadline, where the thread drawing it is ended and started again
 * (importing this module anew) while other pages wait. Measured on the event loop at load 13-20 on
 * 2 shared cores: 1 MiB of plain posts took 340-620 ms and 1 MiB of marked characters 5-9 s;
 * micromark took 94 ms on 4,096 characters led by 160 list marks and 529 ms on 16,384 led by 640
 * at load 14 (its cost grows faster than the text), 11-21 s on a 64 KiB README of nested brackets.
 */
const BUDGET = {
  /** Characters of caller text drawn (posts' items as JSON, snippets, the README). */
  textChars: 512 * 1024,
  /** Hidden characters, each drawn as a marker element. */
  hiddenChars: 8192,
  /** The README's length: micromark is slow even on plain input (30,000 spaces and newlines: 880 ms). */
  readmeChars: 8192,
  /** The README's Markdown punctuation (brackets, emphasis, list and quote marks, raw HTML's `<`): what nests or backtracks in micromark. */
  markdownMarks: 320,
};
const MARKDOWN_MARKS = /[[\]*_<>`-]/g;

/** Whether drawing these reads stays within BUDGET: one linear pass over the texts the page would draw. */
export function withinBudget(reads: FirstPaintReads): boolean {
  const texts: string[] = [];
  // A post's every field is drawn (its text, and the others as inert JSON), so its whole item is counted.
  for (const page of [reads.recent, reads.posts, reads.thread]) for (const record of page?.items ?? []) texts.push(JSON.stringify(record.item));
  if (reads.record) texts.push(JSON.stringify(reads.record.item));
  for (const channel of reads.channels?.channels ?? []) texts.push(channel.latest.snippet);
  let chars = 0;
  let hidden = 0;
  for (const text of texts) {
    chars += text.length;
    hidden += hiddenCharacterCount(text);
  }
  const readme = reads.artifact?.readme ?? '';
  chars += readme.length;
  hidden += hiddenCharacterCount(readme);
  if (chars > BUDGET.textChars || hidden > BUDGET.hiddenChars) return false;
  return readme.length <= BUDGET.readmeChars && (readme.match(MARKDOWN_MARKS)?.length ?? 0) <= BUDGET.markdownMarks;
}

/** The content of the public page at `relative` (the path under /ui/), or undefined when a read it needs is not in `reads`. */
function pageContent(relative: string, query: URLSearchParams, reads: FirstPaintReads): ComponentChildren | undefined {
  if (relative === '') {
    if (!reads.channels || !reads.recent) return undefined;
    const filters = definedFilters(filtersFrom(Object.fromEntries(query)));
    return (
      <>
        <BoardHeading />
        <BoardColumns channels={reads.channels} recent={reads.recent} filters={filters} />
      </>
    );
  }
  if (relative === 'channel') {
    const key = query.get('key');
    if (!key || !reads.posts) return undefined;
    return (
      <>
        <ChannelHeading channelKey={key} />
        {reads.posts.items.map((record) => (
          <PostCard key={record.id} record={record} showChannel={false} />
        ))}
      </>
    );
  }
  if (relative.startsWith('item/')) {
    if (!reads.record || !reads.thread) return undefined;
    const { replies, earlier } = threadReplies(reads.record.id, reads.thread);
    return (
      <>
        <h1>Post</h1>
        <ThreadOpening record={reads.record} />
        <section aria-labelledby="thread-heading">
          <h2 id="thread-heading">{repliesHeading(replies.length, earlier !== null)}</h2>
          <ThreadReplies tree={threadTree(reads.record.id, replies)} parentId={reads.record.id} texts={textsOf(reads.record, replies)} />
        </section>
      </>
    );
  }
  if (relative === 'artifact') return reads.artifact && <ArtifactIntro artifact={reads.artifact} />;
  return undefined;
}

/**
 * The first paint's HTML for the public page at `relative` with its query, or undefined (the
 * page is then served as before: its shell, and the content once its script has read it).
 * Every caller-supplied string is a text node (Preact escapes it); the one HTML that is not, the
 * model card, is micromark's with raw HTML escaped.
 */
export function renderFirstPaint(relative: string, query: URLSearchParams, reads: FirstPaintReads): string | undefined {
  if (!withinBudget(reads)) return undefined;
  const content = pageContent(relative, query, reads);
  if (content === undefined) return undefined;
  return renderToString(
    <ModelCardRenderer.Provider value={modelCardHtml}>
      <Shell path={`${BASE}${relative}`}>{content}</Shell>
    </ModelCardRenderer.Provider>,
  );
}
