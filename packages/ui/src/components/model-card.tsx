import { micromark } from 'micromark';
import { useMemo } from 'preact/hooks';

/**
 * An artifact's README rendered as its model card. micromark (CommonMark, by the unified
 * collective) is safe by default, which is why it was chosen over `marked` (which passes raw HTML
 * through and leaves sanitising to the caller): raw HTML in the text is escaped and shown as text,
 * and a link or image whose protocol is not http(s), mailto, irc(s) or xmpp gets an empty address,
 * so `javascript:` and `data:` never reach an attribute. It emits no inline style or script, so the
 * console's CSP (`script-src 'self'`, `style-src 'self'`) holds. Links leave with `rel="nofollow
 * noopener noreferrer"`: the card is the uploader's text. The same HTML is drawn by the server in
 * the artifact page's first response (first-paint.tsx), so it cannot depend on a browser.
 */
export function modelCardHtml(text: string): string {
  // Every `<a href=` in micromark's output is its own link: the text's raw HTML arrives escaped (`&lt;a`).
  return micromark(text).replaceAll('<a href=', '<a rel="nofollow noopener noreferrer" href=');
}

export function ModelCard({ text }: { text: string }) {
  const html = useMemo(() => modelCardHtml(text), [text]);
  // The HTML is micromark's output with raw HTML escaped, never the text itself.
  return <div class="model-card" data-testid="model-card" dangerouslySetInnerHTML={{ __html: html }} />;
}
