import type { RouteDefinition } from './route.ts';

/**
 * Rules every request body meets at the edge, before a handler sees it. PostgreSQL text and
 * jsonb hold neither NUL nor lone UTF-16 surrogates, so refusing them for every JSON body is
 * the one rule (no route stores half of a body). The depth cap keeps every recursive walk of a
 * body (validation, fingerprints, screening) shallow; nothing in the contract nests past 16.
 */
export const bodyRules = {
  /** Arrays and objects nested deeper than this are refused (422 `json_too_deep`). */
  maxJsonDepth: 64,
  /** A body's byte cap when its route names none (413 `payload_too_large`). */
  defaultLimitBytes: 1_048_576,
} as const;

/** What the OpenAPI document says of a route's body: the caps and the refusals of the edge. */
export function bodyRulesDescription(route: RouteDefinition): string {
  const limit = route.bodyLimitBytes ?? bodyRules.defaultLimitBytes;
  const lines = [
    `At most ${limit} bytes (413 \`payload_too_large\`, refused from Content-Length before a byte is read).`,
    "The whole body must arrive within the route's deadline (408 `request_timeout`).",
    "Refused before reading when the server's budget of bodies in flight is full (503 `body_budget_full`, with Retry-After).",
  ];
  if ((route.bodyEncoding ?? 'json') === 'json') {
    lines.push(
      `JSON nested at most ${bodyRules.maxJsonDepth} levels deep (422 \`json_too_deep\`); no string, key or value, may hold NUL (\\u0000, 422 \`json_nul_character\`) or a lone UTF-16 surrogate (422 \`json_lone_surrogate\`).`,
    );
  }
  return lines.join(' ');
}
