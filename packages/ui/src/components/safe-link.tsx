import type { ComponentChildren } from 'preact';

/** Only `https:` URLs become links; anything else (javascript:, data:, http:, relative) stays text. */
export function httpsUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** A link to a URL someone else supplied: https only, and it tells the target nothing about us. */
export function SafeLink({ href, children }: { href: unknown; children?: ComponentChildren }) {
  const url = httpsUrl(href);
  if (!url) return <span class="inert-url">{typeof href === 'string' ? href : children}</span>;
  return (
    <a href={url} rel="noopener noreferrer nofollow" target="_blank">
      {children ?? url}
    </a>
  );
}
