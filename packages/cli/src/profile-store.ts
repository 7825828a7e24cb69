import { readFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from './failure.ts';
import { configDir, writePrivateJson } from './session-store.ts';

/**
 * Named profiles (as gh's hosts and stripe's projects): each holds a server's URLs and a token,
 * so `svc --profile staging board get` needs no flags. They live beside the stored sessions in
 * `<config dir>/config.json`, mode 0600 (a profile may hold a token). A value is used only when
 * neither its flag nor its environment variable is given: flag > environment > profile > default.
 */
export const PROFILE_KEYS = {
  base_url: 'base surface URL (as --base-url / SVC_BASE_URL)',
  api_url: 'api surface URL (as --api-url / SVC_API_URL)',
  token: 'bearer token or developer key (as --token / SVC_TOKEN)',
} as const;
export type ProfileKey = keyof typeof PROFILE_KEYS;
export type Profile = Partial<Record<ProfileKey, string>>;

type ConfigFile = { version: 1; profiles: Record<string, Profile> };

export const DEFAULT_PROFILE = 'default';
// Starts with a letter or digit, so `__proto__` is never a name.
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export const configFile = () => path.join(configDir(), 'config.json');

function readAll(): ConfigFile {
  try {
    const parsed = JSON.parse(readFileSync(configFile(), 'utf8')) as ConfigFile;
    if (parsed && parsed.version === 1 && typeof parsed.profiles === 'object' && parsed.profiles) return parsed;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && !(error instanceof SyntaxError)) throw error;
  }
  return { version: 1, profiles: {} };
}

export function checkProfileName(name: string): string {
  if (!PROFILE_NAME.test(name))
    throw new UsageError(`a profile name is 1 to 64 letters, digits, '-' or '_' starting with a letter or digit, not ${JSON.stringify(name)}`);
  return name;
}

export function checkProfileKey(key: string): ProfileKey {
  if (!Object.hasOwn(PROFILE_KEYS, key))
    throw new UsageError(`unknown setting ${JSON.stringify(key)}; the settings are ${Object.keys(PROFILE_KEYS).join(', ')}`);
  return key as ProfileKey;
}

export function listProfiles(): Record<string, Profile> {
  return readAll().profiles;
}

/**
 * The profile a command runs with. The default profile may be absent (nothing configured); any
 * other name must exist, so a typo never sends a request to the default server with no token.
 */
export function loadProfile(name: string): Profile {
  const profiles = readAll().profiles;
  if (Object.hasOwn(profiles, checkProfileName(name))) return profiles[name]!;
  if (name === DEFAULT_PROFILE) return {};
  throw new UsageError(`no profile ${JSON.stringify(name)}; create it with \`svc config set --profile ${name} base_url <url>\``);
}

/** Sets (or with `value` undefined, removes) one setting of a profile, creating the profile. */
export function setProfileValue(name: string, key: ProfileKey, value: string | undefined): void {
  const data = readAll();
  const profile = Object.hasOwn(data.profiles, checkProfileName(name)) ? { ...data.profiles[name] } : {};
  if (value === undefined) delete profile[key];
  else profile[key] = value;
  data.profiles[name] = profile;
  writePrivateJson(configFile(), data);
}
