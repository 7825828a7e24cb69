import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import type { OAuthSession } from '@svc/client';

/**
 * A signed-in session of one server, as `svc login` stores it: OAuth tokens (refreshed as they
 * expire), or with `kind: 'token'` a developer key or token given to `svc login --with-token`,
 * used as it is (absent `kind` is OAuth: files written before it existed).
 */
export interface StoredSession extends OAuthSession {
  kind?: 'oauth' | 'token';
  clientId: string;
  subject: string;
}

type SessionFile = { version: 1; servers: Record<string, StoredSession> };

/** `$XDG_CONFIG_HOME/svc`, else `~/.config/svc`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homedir(), '.config');
  return path.join(base, 'svc');
}

export const sessionFile = () => path.join(configDir(), 'credentials.json');
const serverKey = (baseUrl: string) => baseUrl.replace(/(?<!\/)\/+$/, '');

function readAll(): SessionFile {
  try {
    const parsed = JSON.parse(readFileSync(sessionFile(), 'utf8')) as SessionFile;
    if (parsed && parsed.version === 1 && typeof parsed.servers === 'object') return parsed;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !(error instanceof SyntaxError)) throw error;
  }
  return { version: 1, servers: {} };
}

function writeAll(data: SessionFile): void {
  writePrivateJson(sessionFile(), data);
}

/** Tokens are secrets: the directory is 0700, the file 0600, written whole and renamed into place. */
export function writePrivateJson(file: string, data: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

export function loadSession(baseUrl: string): StoredSession | undefined {
  return readAll().servers[serverKey(baseUrl)];
}

export function saveSession(baseUrl: string, session: StoredSession): void {
  const data = readAll();
  data.servers[serverKey(baseUrl)] = session;
  writeAll(data);
}

/** Forgets the session of one server; true when there was one. */
export function removeSession(baseUrl: string): boolean {
  const data = readAll();
  const key = serverKey(baseUrl);
  if (!data.servers[key]) return false;
  delete data.servers[key];
  if (Object.keys(data.servers).length === 0) rmSync(sessionFile(), { force: true });
  else writeAll(data);
  return true;
}
