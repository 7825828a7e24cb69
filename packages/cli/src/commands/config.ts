import type { Command } from 'commander';
import { withContext } from '../context.ts';
import { CliFailure, UsageError } from '../failure.ts';
import { checkProfileKey, configFile, listProfiles, PROFILE_KEYS, type Profile, setProfileValue } from '../profile-store.ts';
import { table } from '../output.ts';

/** A token is a secret: lists show that one is set, never its value (`svc config get token` prints it). */
const shown = (profile: Profile): Profile => (profile.token ? { ...profile, token: '(set)' } : profile);

/** A URL setting must be an http(s) URL, checked when set rather than on every later command. */
function checkValue(key: string, value: string): void {
  if (key === 'token') return;
  let protocol: string | undefined;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new UsageError(`${key} must be an http or https URL such as http://127.0.0.1:8787, not ${JSON.stringify(value)}`);
}

/** `svc config set|get|unset|list`: the settings of the profile chosen by --profile or SVC_PROFILE. */
export function registerConfigCommands(program: Command): void {
  const config = program
    .command('config')
    .description(`Settings kept per profile in the config file: ${Object.keys(PROFILE_KEYS).join(', ')}`)
    .addHelpText(
      'after',
      `\nSettings:\n${Object.entries(PROFILE_KEYS)
        .map(([key, help]) => `  ${key.padEnd(9)} ${help}`)
        .join(
          '\n',
        )}\n\nA flag wins over its environment variable, which wins over the profile, which wins over the default.\n\nExamples:\n  $ svc config set base_url https://svc.example.com\n  $ svc config set --profile staging base_url https://staging.example.com\n  $ svc --profile staging board get general\n  $ SVC_PROFILE=staging svc config list --json`,
    );
  config
    .command('set <name> <value>')
    .description("Set a setting of the profile (created if new); the file's mode is 0600")
    .action(
      withContext(
        (cli, name: string, value: string) => {
          const key = checkProfileKey(name);
          checkValue(key, value);
          setProfileValue(cli.profileName(), key, value);
          cli.output.result(
            { profile: cli.profileName(), name: key, file: configFile() },
            (data) => `${data.name} set in profile ${data.profile} (${data.file})`,
          );
        },
        { profileMayBeNew: true },
      ),
    );
  config
    .command('unset <name>')
    .description('Remove a setting from the profile')
    .action(
      withContext((cli, name: string) => {
        const key = checkProfileKey(name);
        setProfileValue(cli.profileName(), key, undefined);
        cli.output.result({ profile: cli.profileName(), name: key }, (data) => `${data.name} removed from profile ${data.profile}`);
      }),
    );
  config
    .command('get <name>')
    .description('Print a setting of the profile (exit 1 when it is not set)')
    .action(
      withContext((cli, name: string) => {
        const key = checkProfileKey(name);
        const value = cli.profile()[key];
        if (value === undefined) throw new CliFailure(`${key} is not set in profile ${cli.profileName()}`);
        cli.output.result({ profile: cli.profileName(), name: key, value }, (data) => data.value);
      }),
    );
  config
    .command('list')
    .alias('ls')
    .description('List every profile and its settings (a token shows as "(set)")')
    .action(
      withContext((cli) => {
        const profiles = Object.entries(listProfiles()).map(([name, profile]) => ({ name, active: name === cli.profileName(), ...shown(profile) }));
        cli.output.result({ file: configFile(), profiles }, (data) =>
          data.profiles.length === 0
            ? `no profiles yet; set one with \`svc config set base_url <url>\` (${data.file})`
            : table([
                ['PROFILE', 'BASE_URL', 'API_URL', 'TOKEN'],
                ...data.profiles.map((row) => [`${row.active ? '* ' : '  '}${row.name}`, row.base_url ?? '-', row.api_url ?? '-', row.token ?? '-']),
              ]),
        );
      }),
    );
}
