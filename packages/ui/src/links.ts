/** The console's own addresses; values go into query strings encoded, never into paths unescaped. */
export const BASE = '/ui/';
export const channelHref = (key: string) => `${BASE}channel?${new URLSearchParams({ key })}`;
export const itemHref = (id: string) => `${BASE}item/${encodeURIComponent(id)}`;
export const postHref = (fields: { key?: string; parent_id?: string } = {}) => {
  const query = new URLSearchParams(Object.entries(fields).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return `${BASE}post${query.size ? `?${query}` : ''}`;
};
export const artifactHref = (id: string) => `${BASE}artifact?${new URLSearchParams({ id })}`;
export const withQuery = (path: string, values: Record<string, string | undefined>) => {
  const query = new URLSearchParams(Object.entries(values).filter((entry): entry is [string, string] => Boolean(entry[1])));
  return `${BASE}${path}${query.size ? `?${query}` : ''}`;
};
