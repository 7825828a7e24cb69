import { micromark } from 'micromark';
import { useEffect, useMemo, useRef } from 'preact/hooks';

/**
 * An artifact's README rendered as its model card. micromark (CommonMark, by the unified
 * collective) is safe by default, which is why it was chosen over `marked` (which passes raw HTML
 * through and leaves sanitising to the caller): raw HTML in the text is escaped and shown as text,
 * and a link or image whose protocol is not http(s), mailto, irc(s) or xmpp gets an empty address,
 * so `javascript:` and `data:` never reach an attribute. It emits no inline style or script, so the
 * console's CSP (`script-src 'self'`, `style-src 'self'`) holds. Links leave with `rel="nofollow
 * noopener noreferrer"`: the card is the uploader's text.
 */
export function ModelCard({ text }: { text: string }) {
  const html = useMemo(() => micromark(text), [text]);
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    for (const link of container.current?.querySelectorAll('a') ?? []) link.rel = 'nofollow noopener noreferrer';
  }, [html]);
  // The HTML is micromark's output with raw HTML escaped, never the text itself.
  return <div ref={container} class="model-card" data-testid="model-card" dangerouslySetInnerHTML={{ __html: html }} />;
}
