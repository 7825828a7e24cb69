import { BlackboardKind, blackboardContract, catalogContract, fillPath, systemContract, toSearchParams, type RouteDefinition } from '@svc/schemas';
import type { ContractDispatch, DispatchInput } from '../http/dispatch.ts';

/**
 * One read a public page makes when it first renders: the route and the input its client sends,
 * and the name the server's first paint knows its answer by (packages/ui/src/first-paint.tsx).
 */
interface FirstLoadRead {
  name: string;
  route: RouteDefinition;
  input: DispatchInput;
}

/**
 * The page sizes the console's public pages read with (packages/ui: board-lists.tsx, channel.tsx,
 * item.tsx, artifact.tsx). A drift is not an error, only a lost shortcut (the page then reads over
 * the network as before); console-first-load.test.ts fails on it, since it watches for those reads.
 */
const BOARD_PAGE = 20;
const CHANNEL_PAGE = 50;
const THREAD_PAGE = 200;
const ARTIFACT_FILES = 200;
const ARTIFACT_REVIEWS = 20;

/** Past this many bytes of JSON the page carries no more answers: a long thread's replies are read as before. */
export const MAX_INLINED_BYTES = 1024 * 1024;

const nonEmpty = (value: string | null) => (value ? value : undefined);
const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/**
 * The reads of the public page at `relative` (the path under /ui/) with its query, as the page's
 * own code makes them, or none for any other page (signed-in pages, the catalog's search). The
 * root document (`GET /`) is read by every page first: it names the api surface.
 */
export function firstLoadReads(relative: string, query: URLSearchParams): FirstLoadRead[] {
  const root = { name: 'root', route: systemContract.root, input: {} };
  if (relative === '') {
    // The board's filters as board-filters.tsx reads them from the address: empty ones dropped, an unknown kind ignored.
    const kind = nonEmpty(query.get('kind'));
    const filters = {
      task: nonEmpty(query.get('task')),
      kind: kind && (BlackboardKind.options as readonly string[]).includes(kind) ? kind : undefined,
      topic: nonEmpty(query.get('topic')),
      q: nonEmpty(query.get('q')),
    };
    return [
      root,
      { name: 'channels', route: blackboardContract.channels, input: { query: { ...filters, limit: BOARD_PAGE } } },
      { name: 'recent', route: blackboardContract.query, input: { query: { ...filters, limit: BOARD_PAGE } } },
    ];
  }
  if (relative === 'channel') {
    const key = nonEmpty(query.get('key'));
    return key ? [root, { name: 'posts', route: blackboardContract.get, input: { query: { key, limit: CHANNEL_PAGE } } }] : [];
  }
  const item = /^item\/([^/]+)$/.exec(relative);
  if (item) {
    const id = decoded(item[1]!);
    if (!id) return [];
    return [
      root,
      { name: 'record', route: blackboardContract.show, input: { params: { id } } },
      { name: 'thread', route: blackboardContract.query, input: { query: { thread_id: id, limit: THREAD_PAGE } } },
    ];
  }
  if (relative === 'artifact') {
    const id = nonEmpty(query.get('id'));
    if (!id) return [];
    const params = { id };
    return [
      root,
      { name: 'artifact', route: catalogContract.artifact, input: { params } },
      { name: 'versions', route: catalogContract.versions, input: { params } },
      { name: 'files', route: catalogContract.files, input: { params, query: { limit: ARTIFACT_FILES } } },
      { name: 'trustBundles', route: catalogContract.trustBundles, input: { params } },
      { name: 'reviews', route: catalogContract.reviews, input: { params, query: { limit: ARTIFACT_REVIEWS } } },
      { name: 'reviewSummary', route: catalogContract.reviewSummary, input: { params } },
    ];
  }
  return [];
}

/**
 * The key an answer is found by in the page: method, path, and the query's parameters sorted, so
 * the order a client happens to write them in does not matter. packages/ui/src/first-load.ts
 * builds the same key from the URL its client asks for.
 */
export function firstLoadKey(method: string, pathAndQuery: string): string {
  const url = new URL(pathAndQuery, 'http://first-load.invalid');
  url.searchParams.sort();
  return `${method.toUpperCase()} ${url.pathname}${url.search}`;
}

/** The answers a page's first response carries: by their key for the page's script, by their read's name for the server's first paint. */
export interface FirstLoad {
  answers: Record<string, unknown>;
  byName: Record<string, unknown>;
}

/**
 * Runs the page's reads in process, as the browser's own calls (its address, no credential: these
 * are the public reads an anonymous visitor makes), and answers each 200 answer by its key.
 * A refused or failed read is left out: the page makes it itself and shows its error as before.
 * So is every answer past MAX_INLINED_BYTES of JSON in all, in the reads' order.
 */
export async function readFirstLoad(dispatch: ContractDispatch, reads: FirstLoadRead[], ip: string): Promise<FirstLoad> {
  const answers = await Promise.all(
    reads.map(async ({ name, route, input }) => {
      try {
        const answer = await dispatch.call(route, input, { ip });
        if (answer.status !== 200 || answer.json === undefined) return undefined;
        const url = `${fillPath(route.path, input.params)}${toSearchParams(input.query)}`;
        return { name, key: firstLoadKey(route.method, url), json: answer.json, bytes: Buffer.byteLength(answer.text) };
      } catch {
        return undefined;
      }
    }),
  );
  const inlined: FirstLoad = { answers: {}, byName: {} };
  let total = 0;
  for (const answer of answers) {
    if (!answer || total + answer.bytes > MAX_INLINED_BYTES) continue;
    total += answer.bytes;
    inlined.answers[answer.key] = answer.json;
    inlined.byName[answer.name] = answer.json;
  }
  return inlined;
}

/**
 * The answers as a `<script type="application/json">` block: data, never run (the CSP's
 * `script-src 'self'` holds), read by the console's first script. Every `<`, `>` and `&` is
 * written as a JSON escape, so no posted text (`</script><script>…`, `<!--`) can end the block or
 * start markup: the browser sees one element of JSON text, and JSON.parse gives the text back.
 */
export function firstLoadBlock(answers: Record<string, unknown>): string {
  const json = JSON.stringify({ answers }).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `<script type="application/json" id="svc-first-load">${json}</script>`;
}
