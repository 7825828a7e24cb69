/**
 * The answers the server put in the page it served (packages/server/src/console/first-load.ts):
 * the reads a public page (the board, a channel, a thread, an artifact) makes when it first
 * renders, so its content is on screen without a further request. Each answer is given once, to
 * the first anonymous GET of its URL; every later read (a reload, "Load more", a signed-in call)
 * goes to the network as before.
 */
let answers: Map<string, unknown> | undefined;

/** The same key the server wrote: method, path, and the query's parameters sorted. */
export function firstLoadKey(method: string, url: string): string {
  const parsed = new URL(url, location.origin);
  parsed.searchParams.sort();
  return `${method.toUpperCase()} ${parsed.pathname}${parsed.search}`;
}

function inlinedAnswers(): Map<string, unknown> {
  if (answers) return answers;
  answers = new Map();
  const block = document.getElementById('svc-first-load');
  if (!block?.textContent) return answers;
  try {
    // JSON text, never markup or code: posted strings stay strings.
    const data = JSON.parse(block.textContent) as { answers?: Record<string, unknown> };
    for (const [key, value] of Object.entries(data.answers ?? {})) answers.set(key, value);
  } catch {
    // A block that does not parse only costs the shortcut: the pages read over the network.
  }
  block.remove();
  return answers;
}

/**
 * A fetch for the console's clients: the inlined answer when the page holds one for this request,
 * else the network. Only a GET without a credential takes one (they were read anonymously).
 */
export const firstLoadFetch: typeof fetch = async (input, init) => {
  const request = input instanceof Request ? input : undefined;
  const method = request?.method ?? init?.method ?? 'GET';
  const url = request?.url ?? String(input);
  const authorised = request ? request.headers.has('authorization') : new Headers(init?.headers).has('authorization');
  if (method === 'GET' && !authorised) {
    const stored = inlinedAnswers();
    const key = firstLoadKey(method, url);
    if (stored.has(key)) {
      const answer = stored.get(key);
      stored.delete(key);
      return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
    }
  }
  return fetch(input, init);
};
