import { micromark } from 'micromark';

/**
 * An artifact's README as its model card's HTML. micromark (CommonMark, by the unified
 * collective) is safe by default, which is why it was chosen over `marked` (which passes raw HTML
 * through and leaves sanitising to the caller): raw HTML in the text is escaped and shown as text,
 * and a link or image whose protocol is not http(s), mailto, irc(s) or xmpp gets an empty address,
 * so `javascript:` and `data:` never reach an attribute. It emits no inline style or script, so the
 * console's CSP (`script-src 'self'`, `style-src` without inline styles) holds. Links leave with
 * `rel="nofollow noopener noreferrer"`: the card is the uploader's text. Its own module, so the
 * browser loads micromark (about 25 KB gzipped) only for a card it has to draw itself (model-card.tsx).
 */
export function modelCardHtml(text: string): string {
  // Every `<a href=` in micromark's output is its own link: the text's raw HTML arrives escaped (`&lt;a`).
  return micromark(text).replaceAll('<a href=', '<a rel="nofollow noopener noreferrer" href=');
}
