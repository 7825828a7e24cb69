/**
 * A duration as OpenAI's `x-ratelimit-reset-*` headers write it (Go's duration format): `20ms`
 * under a second, else hours, minutes and seconds with the zero units inside kept (`6m0s`, `1s`,
 * `1.5s`, `1h0m0s`).
 */
export function openAiDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  // Every limited request writes the minute's reset: the requests of one millisecond share its text.
  if (whole === last.whole) return last.text;
  const text = format(whole);
  last = { whole, text };
  return text;
}

let last = { whole: -1, text: '' };

function format(whole: number): string {
  if (whole < 1000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  // A whole number of milliseconds over 1000 prints as its decimal, at most three places (the
  // nearest double to it prints so): no rounding to do.
  const secondsText = `${(whole % 60_000) / 1000}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}
