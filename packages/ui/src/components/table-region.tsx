import type { ComponentChildren } from 'preact';

/**
 * A wide table's own scrolling box (.table-wrap), named and reachable by keyboard: on a phone it
 * scrolls sideways inside itself, and a keyboard user must be able to focus it to scroll it.
 */
export function TableRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to be scrolled by keyboard (axe: scrollable-region-focusable).
    <section class="table-wrap" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
