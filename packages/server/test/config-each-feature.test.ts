import { fileURLToPath } from 'node:url';
import test from 'ava';
import { z } from 'zod';
import { run } from '@svc/testing/run';
import { ConfigError, featureConfigs, loadConfig } from '../src/config.ts';

/**
 * Each part of the configuration (the server-wide part and every feature's `<f>-config.ts`) with
 * one wrong value: start-up stops, and the message names the variable, its value and what was
 * expected. These rows hold the message word for word; a feature with no row here gets one derived
 * from its schema (derivedRow), so a new feature needs no edit of this file.
 */
const givenRows = {
  server: { variable: 'SVC_PORT', value: 'abc', says: 'expected a port number from 0 to 65535' },
  identity: { variable: 'SVC_OAUTH_CODE_TTL_SECONDS', value: '601', says: 'expected seconds from 1 to 600' },
  storage: { variable: 'SVC_STORAGE', value: 'ftp', says: 'Invalid option: expected one of "local"|"gcs"|"s3"' },
  catalog: { variable: 'SVC_CATALOG_DEMO', value: 'maybe', says: 'Invalid option: expected one of "auto"|"on"|"off"' },
  blackboard: { variable: 'SVC_BLACKBOARD_WINDOW_SECONDS', value: '0', says: 'expected seconds from 1 to 86400' },
  pdf: { variable: 'SVC_PDF_WORKERS', value: '65', says: 'expected a worker count from 1 to 64' },
  billing: { variable: 'SVC_CREDIT_HOLD_TTL_SECONDS', value: '4', says: 'expected seconds from 5 to 86400' },
  requests: { variable: 'SVC_REQUESTS_PER_HOUR', value: '-1', says: 'expected a request count from 0 to 1000000' },
  x402: { variable: 'SVC_X402_PAY_TO', value: '0x123', says: 'expected an EVM address: 0x and 40 hex digits' },
  inference: { variable: 'SVC_SSE_KEEPALIVE_MS', value: '9', says: 'expected milliseconds from 10 to 600000' },
  jobs: { variable: 'SVC_JOBS_WORKERS', value: 'two', says: 'expected a worker count from 0 to 64' },
  responses: { variable: 'SVC_RESPONSES_RETENTION_DAYS', value: '0', says: 'expected days from 1 to 3650' },
  limits: { variable: 'SVC_LIMITS_AGENT', value: 'requests_per_minute=0', says: 'requests_per_minute must be at least 1' },
  responseCache: { variable: 'SVC_RESPONSE_CACHE_TTL_SECONDS', value: '0', says: 'expected seconds from 1 to 2592000' },
  console: { variable: 'SVC_UI', value: 'maybe', says: 'expected on or off' },
  tasks: { variable: 'SVC_TASKS_LEASE_SECONDS', value: '3601', says: 'expected seconds from 1 to 3600' },
};

interface Row {
  variable: string;
  value: string;
  says: string;
}

/** Values no setting of this codebase takes: not a number, not an enum's member, not a URL, not a flag. */
const candidateWrongValues = ['not a value', '-1', '0'];

/**
 * A row for a part that has none above: its first variable (the settings object's own order, secrets left out) that
 * one candidate value makes the part refuse with one issue naming that variable; undefined when
 * none does, which the first test reports.
 */
function derivedRow(settings: z.ZodType): Row | undefined {
  const object = settings instanceof z.ZodPipe ? settings.in : settings;
  if (!(object instanceof z.ZodObject)) return undefined;
  // Start-up hides a secret's value (config.ts's shownValue), so a row's message could not name it.
  for (const variable of Object.keys(object.shape).filter((name) => !/TOKEN|SECRET|KEY/.test(name)))
    for (const value of candidateWrongValues) {
      const parsed = settings.safeParse({ [variable]: value });
      const issues = parsed.success ? [] : parsed.error.issues;
      if (issues.length === 1 && issues[0]!.path[0] === variable) return { variable, value, says: issues[0]!.message };
    }
  return undefined;
}

const derivedRows = Object.fromEntries(
  Object.entries(featureConfigs)
    .filter(([part]) => !(part in givenRows))
    .map(([part, settings]) => [part, derivedRow(settings)]),
);
const wrongValueOf: Record<string, Row> = {
  ...givenRows,
  ...Object.fromEntries(Object.entries(derivedRows).filter((entry): entry is [string, Row] => entry[1] !== undefined)),
};

const issueOf = ({ variable, value, says }: Row) => `${variable}=${JSON.stringify(value)}: ${says}`;

test('every feature whose settings config.ts composes has a row, given or derived, and no row names a part that is gone', (t) => {
  t.deepEqual(
    Object.entries(derivedRows)
      .filter(([, row]) => row === undefined)
      .map(([part]) => part),
    [],
    'parts none of whose variables a candidate value makes refuse: give them a row',
  );
  t.deepEqual(Object.keys(wrongValueOf).sort(), ['server', ...Object.keys(featureConfigs)].sort());
});

test('one wrong value of each part stops loadConfig with that one issue, naming the variable and what it expected', (t) => {
  for (const [part, row] of Object.entries(wrongValueOf)) {
    const error = t.throws(() => loadConfig({ [row.variable]: row.value }), { instanceOf: ConfigError }, part);
    t.deepEqual(error?.issues, [issueOf(row)], part);
  }
});

test('wrong values in every part are reported together, each naming its variable', (t) => {
  const env = Object.fromEntries(Object.values(wrongValueOf).map(({ variable, value }) => [variable, value]));
  const error = t.throws(() => loadConfig(env), { instanceOf: ConfigError });
  t.deepEqual(error?.issues.sort(), Object.values(wrongValueOf).map(issueOf).sort());
});

test('a whole-part check (the upstream needs its base URL) says which variables it is about', (t) => {
  const error = t.throws(() => loadConfig({ SVC_UPSTREAM_MODELS: 'gpt-4o-mini' }), { instanceOf: ConfigError });
  t.deepEqual(error?.issues, ['SVC_UPSTREAM_BASE_URL: required when SVC_UPSTREAM_MODELS or SVC_UPSTREAM_API_KEY is set']);
});

test('svc-server start with a wrong value for every feature exits 1 and names each on stderr', async (t) => {
  const env = Object.fromEntries(Object.values(wrongValueOf).map(({ variable, value }) => [variable, value]));
  const bin = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
  const started = await run(process.execPath, [bin, 'start'], {
    cwd: process.cwd(),
    env: { ...env, SVC_DATA_DIR: '/nonexistent/never-created' },
    timeoutMs: 60_000,
  });
  t.is(started.code, 1, started.stderr);
  t.is(started.stdout, '', 'nothing started');
  for (const row of Object.values(wrongValueOf)) t.true(started.stderr.includes(`  - ${issueOf(row)}\n`), `${row.variable} in:\n${started.stderr}`);
});
