import { paging } from './route.ts';

/**
 * The one paging declaration of a cursor list (`cursorList` answers, `cursorQuery` asks; both in
 * cursor-list.ts): the page's items are `data`, `next_cursor` is the next request's `cursor`,
 * `has_more: false` ends the walk. The client derives `.all()`/`.pages()` and the CLI
 * `--all`/`--limit` from it.
 */
export const cursorPaging = paging({ items: 'data', cursor: 'next_cursor', hasMore: 'has_more', cursorIn: 'query', cursorParam: 'cursor' });
