/**
 * Fills `:name` and `*name` placeholders. Values are encoded; `*` values keep their slashes
 * but every segment is encoded. A `.` or `..` segment is refused so a value can never climb
 * out of the path the contract declares.
 */
export function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/([:*])([A-Za-z0-9_]+)/g, (_match, kind: string, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null || value === '') throw new TypeError(`Missing path parameter "${name}" for ${template}`);
    const segments = kind === '*' ? String(value).split('/') : [String(value)];
    for (const segment of segments) {
      if (segment === '.' || segment === '..') throw new TypeError(`Path parameter "${name}" may not contain "." or ".." segments`);
    }
    return segments.map(encodeURIComponent).join('/');
  });
}

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
