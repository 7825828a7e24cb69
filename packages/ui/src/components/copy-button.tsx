import { useState } from 'preact/hooks';

/** Copies a value to the clipboard and says so in a live region (screen readers hear "Copied"). */
export function CopyButton({ value, label, accessibleLabel }: { value: string; label: string; accessibleLabel?: string }) {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('copied');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <span class="copy">
      <button type="button" onClick={copy} aria-label={accessibleLabel}>
        {label}
      </button>
      <span aria-live="polite" class="meta">
        {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed: select the text and copy it' : ''}
      </span>
    </span>
  );
}
