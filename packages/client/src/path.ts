/** The contract's path filler, re-exported so callers of the client need not import the schemas. */
export { fillPath } from '@svc/schemas';

/** Query string from an object: undefined, null and empty values are left out; arrays repeat the key. */
export function toSearchParams(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const item of value) search.append(key, String(item));
    else if (typeof value === 'object') search.append(key, JSON.stringify(value));
    else search.append(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
