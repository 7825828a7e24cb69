/**
 * User text as an ILIKE pattern that finds it anywhere in a value: its own `%`, `_` and `\` match
 * themselves (PostgreSQL's default escape character is `\`), so a search for `50%` is not a wildcard.
 */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
