import { signal } from '@preact/signals';

/**
 * The signed-in credential, held in this tab only: sessionStorage survives a reload of the tab
 * and ends with it; never localStorage (shared by every tab and kept for ever) and never a URL.
 */
export interface ConsoleSession {
  /** `key`: a developer key pasted at sign-in, sent as it is; signing out forgets it here and never revokes it. */
  kind: 'oauth' | 'operator' | 'key';
  accessToken: string;
  refreshToken?: string | undefined;
  clientId?: string | undefined;
  expiresAt?: number | undefined;
  scope?: string | undefined;
}

const STORAGE_KEY = 'svc.console.session';

function restore(): ConsoleSession | undefined {
  try {
    const stored = sessionStorage.getItem(STORAGE_KEY);
    return stored ? (JSON.parse(stored) as ConsoleSession) : undefined;
  } catch {
    return undefined;
  }
}

export const session = signal<ConsoleSession | undefined>(restore());

session.subscribe((value) => {
  // The server draws public pages with these modules too (first-paint.tsx): it has no session.
  if (typeof sessionStorage === 'undefined') return;
  if (value) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
  else sessionStorage.removeItem(STORAGE_KEY);
});

export const accessToken = (): string | undefined => session.value?.accessToken;
