import { resolveOptions, SvcError } from '@svc/client/core';
import type { SvcClient } from '@svc/client';
import type { BlackboardClient } from '@svc/client/blackboard';
import { CliFailure, UsageError } from './failure.ts';
import { idleTimeoutMs } from './idle-timeout.ts';
import type { Command } from 'commander';
import { Output } from './output.ts';
import { checkProfileName, DEFAULT_PROFILE, listProfiles, loadProfile, type Profile } from './profile-store.ts';
import { loadSession, saveSession } from './session-store.ts';

export interface GlobalOptions {
  baseUrl?: string;
  apiUrl?: string;
  token?: string;
  json?: boolean;
  /** --profile / SVC_PROFILE: whose settings fill in what no flag or variable gives. */
  profile?: string;
  /** Where `token` came from, for messages: '--token or SVC_TOKEN', or 'profile <name>'. */
  tokenFrom?: string;
  /** --idle-timeout / SVC_IDLE_TIMEOUT, in seconds as typed (see idleTimeoutMs). */
  idleTimeout?: string;
}

/** What a command action needs: the global options, a client built from them, and the output. */
export interface CliContext {
  options: GlobalOptions;
  output: Output;
  client(): SvcClient;
  /**
   * The blackboard's methods and helpers, for commands declared with `{ client: 'blackboard' }`:
   * from the blackboard's client alone (its contract entry, not the whole contract), or from the
   * full client when a stored OAuth session needs refreshing.
   */
  blackboard(): BlackboardClient['blackboard'];
  /** The base URL commands talk to (the key of the stored session). */
  baseUrl(): string;
  /** The profile in use (--profile, SVC_PROFILE, else `default`) and its stored settings. */
  profileName(): string;
  profile(): Profile;
}

/**
 * Which client a command's action uses, loaded before it runs: `full` (`@svc/client`, every
 * feature's contract), `blackboard` (`@svc/client/blackboard`, one feature's), or `none`. The
 * CLI loads only what the running command needs: its start-up is the user's wait (issue 44).
 */
export type ClientKind = 'full' | 'blackboard' | 'none';

let fullClientModule: typeof import('@svc/client') | undefined;
let blackboardClientModule: typeof import('@svc/client/blackboard') | undefined;

/** Loads the client module a command needs (each once per process); `contextFor`'s `client()` and `blackboard()` read them. */
export async function loadClient(kind: ClientKind, cli?: CliContext): Promise<void> {
  const needsFull = kind === 'full' || (kind === 'blackboard' && cli !== undefined && !cli.options.token && loadSession(cli.baseUrl()) !== undefined);
  if (needsFull) fullClientModule ??= await import('@svc/client');
  else if (kind === 'blackboard') blackboardClientModule ??= await import('@svc/client/blackboard');
}

/**
 * Builds the context from the command's options merged with the program's global ones; the
 * profile's settings fill in what neither a flag nor its variable gave (flag > env > profile > default).
 * `profileMayBeNew` lets `svc config set` name a profile that does not exist yet.
 */
export function contextFor(command: Command, { profileMayBeNew = false } = {}): CliContext {
  const flags = command.optsWithGlobals<GlobalOptions>();
  const profileName = checkProfileName(flags.profile ?? DEFAULT_PROFILE);
  const profile = profileMayBeNew ? (Object.hasOwn(listProfiles(), profileName) ? loadProfile(profileName) : {}) : loadProfile(profileName);
  const options: GlobalOptions = {
    ...flags,
    baseUrl: flags.baseUrl ?? profile.base_url,
    apiUrl: flags.apiUrl ?? profile.api_url,
    token: flags.token ?? profile.token,
    tokenFrom: flags.token ? '--token or SVC_TOKEN' : profile.token ? `profile ${profileName}` : undefined,
  };
  let client: SvcClient | undefined;
  let boardClient: BlackboardClient | undefined;
  return {
    options,
    output: new Output({ json: Boolean(options.json) }),
    client() {
      if (!client) {
        // --token / SVC_TOKEN win; otherwise the session `svc login` stored for this server,
        // refreshed when it expires and written back so the next command starts fresh.
        const baseUrl = this.baseUrl();
        const stored = options.token ? undefined : loadSession(baseUrl);
        if (!fullClientModule) throw new Error('the client is not loaded: run the action through withContext, or await loadClient("full") first');
        client = fullClientModule.createClient({
          baseUrl: options.baseUrl,
          apiUrl: options.apiUrl,
          token: options.token,
          streamIdleTimeout: idleTimeoutMs(options.idleTimeout),
          ...(stored ? { session: stored, onSessionRefreshed: () => saveSession(baseUrl, stored) } : {}),
        });
      }
      return client;
    },
    blackboard() {
      if (fullClientModule) return this.client().blackboard;
      if (!blackboardClientModule) throw new Error('the blackboard client is not loaded: declare the action with { client: "blackboard" }');
      boardClient ??= blackboardClientModule.createBlackboardClient({
        baseUrl: options.baseUrl,
        apiUrl: options.apiUrl,
        token: options.token,
        streamIdleTimeout: idleTimeoutMs(options.idleTimeout),
      });
      return boardClient.blackboard;
    },
    baseUrl() {
      return resolveOptions({ baseUrl: options.baseUrl, apiUrl: options.apiUrl }).baseUrl;
    },
    profileName: () => profileName,
    profile: () => profile,
  };
}

/** Wraps an action so it receives the context first; errors reach the program's handler. */
export function withContext<A extends unknown[]>(
  action: (cli: CliContext, ...args: A) => Promise<void> | void,
  contextOptions: { profileMayBeNew?: boolean; client?: ClientKind } = {},
) {
  return async function run(this: Command, ...args: unknown[]): Promise<void> {
    const command = args[args.length - 1] as Command;
    const cli = contextFor(command, contextOptions);
    checkUrl('--base-url', 'SVC_BASE_URL', cli.options.baseUrl);
    checkUrl('--api-url', 'SVC_API_URL', cli.options.apiUrl);
    idleTimeoutMs(cli.options.idleTimeout); // a bad value is a usage error before anything is sent
    await loadClient(contextOptions.client ?? 'full', cli);
    try {
      await action(cli, ...(args.slice(0, -1) as A));
    } catch (error) {
      // A stored session the server no longer accepts (even after a refresh): say how to get a new one.
      if (SvcError.isInstance(error) && error.status === 401 && !cli.options.token && loadSession(cli.baseUrl())) {
        throw new CliFailure(
          `${error.message} (${error.code}): the stored session of ${cli.baseUrl()} is no longer valid; run \`svc logout\` and \`svc login\``,
        );
      }
      // No credential at all: say how a CLI user sends one, not which header a program sets.
      if (SvcError.isInstance(error) && error.status === 401 && !cli.options.token && !loadSession(cli.baseUrl())) {
        throw new CliFailure(
          `this needs a credential (${error.code}${error.requestId ? `, request ${error.requestId}` : ''}): sign in with \`svc login\`, or pass a developer key or token with --token or SVC_TOKEN`,
        );
      }
      throw error;
    }
  };
}

/** A server URL that is not an http(s) URL is the user's typo, a usage error (exit 2), not a connection failure. */
function checkUrl(flag: string, variable: string, value: string | undefined): void {
  if (value === undefined) return;
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new UsageError(`${flag} (or ${variable}) must be an http or https URL such as http://127.0.0.1:8787, not ${JSON.stringify(value)}`);
}
