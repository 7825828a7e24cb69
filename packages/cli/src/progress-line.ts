import { bytes } from './commands/catalog.ts';

/** What a file's progress line shows, besides its bar: the payload each bar carries. */
export interface ProgressPayload {
  file: string;
  /** Bytes per second measured since this run began on the file; undefined until one is known. */
  rate?: number;
}

/** A duration as people read it: `<1s`, `42s`, `3m05s`, `1h02m` (never `0s` for work not done). */
export function duration(seconds: number): string {
  if (seconds < 1) return '<1s';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Keeps the end of a long path (the file's name), marking the cut with `…`. */
function tail(text: string, width: number): string {
  if (text.length <= width) return text;
  return width <= 1 ? '…'.slice(0, width) : `…${text.slice(text.length - width + 1)}`;
}

/**
 * One file's progress line, fitted to the terminal's width: `[bar] 42% 36.0/400.0 MiB 12.3 MiB/s
 * ETA 29s path`. The numbers and the ETA come first and always show; the bar shrinks (to none)
 * and the path is cut from the left to fit. A file with no measured rate yet (queued, or just
 * started) shows `ETA --`, never a made-up `0s`.
 */
export function progressLine(progress: { value: number; total: number; maxWidth: number }, payload: ProgressPayload): string {
  const { value, total } = progress;
  const width = Number.isFinite(progress.maxWidth) && progress.maxWidth > 0 ? progress.maxWidth : 100;
  const percent = total > 0 ? Math.floor((100 * value) / total) : 100;
  const rate = payload.rate !== undefined && payload.rate > 0 ? payload.rate : undefined;
  const eta = value >= total ? 'done' : rate ? duration((total - value) / rate) : '--';
  const numbers = `${String(percent).padStart(3)}% ${bytes(value)}/${bytes(total)} ${rate ? `${bytes(rate)}/s` : '-'} ETA ${eta}`;
  // Written one column short of the width: a line that fills the last column wraps on some terminals.
  const room = width - 1 - numbers.length;
  const barWidth = Math.min(30, Math.max(0, room - 1 - Math.min(payload.file.length, 24)));
  const filled = total > 0 ? Math.round((barWidth * Math.min(value, total)) / total) : barWidth;
  const bar = barWidth >= 5 ? `${'█'.repeat(filled)}${'░'.repeat(barWidth - filled)} ` : '';
  const fileRoom = room - bar.length - 1;
  return fileRoom >= 4 ? `${bar}${numbers} ${tail(payload.file, fileRoom)}` : `${bar}${numbers}`.slice(0, Math.max(0, width - 1));
}
