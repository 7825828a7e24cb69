import { timeAgo } from './time-ago.ts';

/**
 * A time said relatively, with the exact time (the reader's locale and zone) on hover and in the
 * machine-readable `datetime`. The words are fixed when drawn; a page open for hours shows the
 * age it had when it was drawn, as GitHub's did before its live element.
 */
export function RelativeTime({ iso }: { iso: string }) {
  const exact = new Date(iso).toLocaleString();
  return (
    <time dateTime={iso} title={exact}>
      {timeAgo(iso)}
    </time>
  );
}
