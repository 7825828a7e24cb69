import path from 'node:path';
import { z } from 'zod';
import { consoleConfigFrom } from './console/console-config.ts';
import { flag, httpUrl, integer, port, secret, withoutTrailingSlash, type EnvVariables } from './env-values.ts';
import { inferenceConfigFrom } from './inference/openai-compatible/upstream-config.ts';
import { storageConfigFrom } from './storage/storage-config.ts';

const milliseconds = (min: number, max: number) => integer(min, max, 'milliseconds');

/** What is server-wide: listeners, public URLs, data, logging, shutdown and the HTTP defences. */
export const serverConfigFrom = z
  .object({
    SVC_HOST: z.string().min(1).default('127.0.0.1'),
    SVC_PORT: port.default(8787),
    SVC_API_PORT: port.optional(),
    SVC_PUBLIC_URL: httpUrl.optional(),
    SVC_PUBLIC_API_URL: httpUrl.optional(),
    SVC_DATA_DIR: z.string().min(1).default('./.svc'),
    DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'expected a PostgreSQL URL such as postgres://user:password@host:5432/database' }).optional(),
    SVC_DATABASE_POOL_MAX: integer(1, 200).default(10),
    SVC_OPERATOR_TOKEN: secret(16).optional(),
    SVC_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SVC_SHUTDOWN_TIMEOUT_MS: milliseconds(0, 600_000).default(10_000),
    SVC_SHUTDOWN_GRACE_MS: milliseconds(0, 600_000).default(0),
    SVC_HTTP_HEADERS_TIMEOUT_MS: milliseconds(100, 600_000).default(10_000),
    SVC_HTTP_REQUEST_TIMEOUT_MS: milliseconds(1_000, 3_600_000).default(300_000),
    SVC_HTTP_KEEP_ALIVE_TIMEOUT_MS: milliseconds(100, 600_000).default(65_000),
    // 0 (Node's own default): Node's fetch opens a new connection for every request that follows
    // a server's close of a busy connection (nodejs/undici#5022), so a cap turned each request
    // past it into a connection of its own. Set one where a load balancer wants connections recycled.
    SVC_HTTP_MAX_REQUESTS_PER_SOCKET: integer(0, 1_000_000, 'a request count (0: unlimited)').default(0),
    SVC_HTTP_MAX_HEADER_BYTES: integer(1024, 1_048_576, 'bytes').default(16_384),
    SVC_HTTP_BODY_BUDGET_BYTES: integer(1_048_576, 17_179_869_184, 'bytes').default(268_435_456),
    // Unset: half the body budget, so one address can never take it all, and several large uploads
    // of one client (a 16 MiB PDF is a 22 MiB JSON body) still run side by side: an eighth (32 MiB)
    // refused a second PDF upload from the same address while the first was being read.
    SVC_HTTP_BODY_BUDGET_PER_CLIENT_BYTES: integer(65_536, 17_179_869_184, 'bytes').optional(),
    SVC_HTTP_BODY_TIMEOUT_MS: milliseconds(100, 3_600_000).default(30_000),
    SVC_HTTP_ANSWER_BUDGET_BYTES: integer(1_048_576, 17_179_869_184, 'bytes').default(134_217_728),
    // Unset: an eighth of the answer budget (16 MiB by default, above the largest board query's 12 MB).
    SVC_HTTP_ANSWER_BUDGET_PER_CLIENT_BYTES: integer(65_536, 17_179_869_184, 'bytes').optional(),
    SVC_HTTP_RESPONSE_STALL_MS: milliseconds(100, 3_600_000).default(30_000),
    SVC_CORS_ORIGINS: z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((origin) => origin.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(z.union([z.literal('*'), z.string().regex(/^https?:\/\/[^/?#\s]+$/, 'an origin is scheme://host[:port], with no path')]), {
          error: 'expected * or comma-separated origins such as https://app.example',
        }),
      ),
    SVC_ALLOWED_HOSTS: z
      .string()
      .default('')
      .transform((value) =>
        value
          .split(',')
          .map((host) => host.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z.union([
            z.literal('*'),
            z.string().regex(/^\.?[a-z0-9.-]+(:\d+)?$|^\[[0-9a-f:.]+\](:\d+)?$/i, 'a host name such as svc.example, or .example for it and its subdomains'),
          ]),
          {
            error: 'expected * or comma-separated host names such as svc.example,.internal.example',
          },
        ),
      ),
    SVC_OPEN_ACCESS: flag.default(false),
    SVC_TRUST_PROXY: flag.default(false),
    SVC_VALIDATE_RESPONSES: flag.default(false),
  })
  .transform((env) => ({
    host: env.SVC_HOST,
    port: env.SVC_PORT,
    /** When set, the api surface gets its own listener on this port. */
    apiPort: env.SVC_API_PORT,
    publicUrl: env.SVC_PUBLIC_URL && withoutTrailingSlash(env.SVC_PUBLIC_URL),
    publicApiUrl: env.SVC_PUBLIC_API_URL && withoutTrailingSlash(env.SVC_PUBLIC_API_URL),
    dataDir: path.resolve(env.SVC_DATA_DIR),
    databaseUrl: env.DATABASE_URL,
    databasePoolMax: env.SVC_DATABASE_POOL_MAX,
    operatorToken: env.SVC_OPERATOR_TOKEN,
    logLevel: env.SVC_LOG_LEVEL,
    shutdownTimeoutMs: env.SVC_SHUTDOWN_TIMEOUT_MS,
    /** How long `/readyz` fails before the listener closes, so a load balancer notices first (0: close at once). */
    shutdownGraceMs: env.SVC_SHUTDOWN_GRACE_MS,
    /** Slow-client and size defences of the HTTP listener. */
    http: {
      headersTimeoutMs: env.SVC_HTTP_HEADERS_TIMEOUT_MS,
      // Node refuses a header deadline longer than the whole-request one.
      requestTimeoutMs: Math.max(env.SVC_HTTP_REQUEST_TIMEOUT_MS, env.SVC_HTTP_HEADERS_TIMEOUT_MS),
      keepAliveTimeoutMs: env.SVC_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxRequestsPerSocket: env.SVC_HTTP_MAX_REQUESTS_PER_SOCKET,
      maxHeaderBytes: env.SVC_HTTP_MAX_HEADER_BYTES,
      /** Bytes of request bodies that may be in flight at once, server-wide; past it a body is refused before it is read. */
      bodyBudgetBytes: env.SVC_HTTP_BODY_BUDGET_BYTES,
      /** The most of that budget one client address may hold (SVC_TRUST_PROXY decides the address). */
      bodyBudgetPerClientBytes: Math.min(
        env.SVC_HTTP_BODY_BUDGET_PER_CLIENT_BYTES ?? Math.floor(env.SVC_HTTP_BODY_BUDGET_BYTES / 2),
        env.SVC_HTTP_BODY_BUDGET_BYTES,
      ),
      /** Bytes of answers over 64 KiB that clients have not taken yet, server-wide; past it an answer to a read is 503. */
      answerBudgetBytes: env.SVC_HTTP_ANSWER_BUDGET_BYTES,
      /** The most of that budget one client address may hold. */
      answerBudgetPerClientBytes: Math.min(
        env.SVC_HTTP_ANSWER_BUDGET_PER_CLIENT_BYTES ?? Math.floor(env.SVC_HTTP_ANSWER_BUDGET_BYTES / 8),
        env.SVC_HTTP_ANSWER_BUDGET_BYTES,
      ),
      /** Deadline for a whole body on routes that name none of their own. */
      bodyTimeoutMs: env.SVC_HTTP_BODY_TIMEOUT_MS,
      /** A response whose connection takes none of its pending bytes for this long is destroyed. */
      responseStallMs: env.SVC_HTTP_RESPONSE_STALL_MS,
    },
    /** Origins a browser may call every route from (`*`: any); discovery documents are open to all. */
    corsOrigins: env.SVC_CORS_ORIGINS,
    /** More host names svc answers besides its public URLs' and loopback's (`*`: any); checked on loopback or when set (DNS rebinding). */
    allowedHosts: env.SVC_ALLOWED_HOSTS,
    /** Callers with no credential act as the open-auth principal on scoped routes. */
    openAccess: env.SVC_OPEN_ACCESS,
    /** Read the client address from X-Forwarded-For (only behind a proxy you control). */
    trustProxy: env.SVC_TRUST_PROXY,
    /** Check every response against the contract (tests turn this on). */
    validateResponses: env.SVC_VALIDATE_RESPONSES,
  }));

/**
 * The settings of the plumbing and the engines, read by the server's root as much as by features:
 * object storage, the web console and the inference engines (`deps.config.storage`, ...).
 */
export const platformConfigs = {
  storage: storageConfigFrom,
  console: consoleConfigFrom,
  inference: inferenceConfigFrom,
};

type PlatformConfigs = { [Key in keyof typeof platformConfigs]: z.output<(typeof platformConfigs)[Key]> };

/**
 * Each feature's settings, at `deps.config.<key>`: empty here, and filled by each feature's
 * `<f>-config.ts`, which declares its part beside its parser (declaration merging):
 *
 * @example
 * declare module '../../server-config.ts' {
 *   interface FeatureConfigs {
 *     requests: RequestsConfig;
 *   }
 * }
 *
 * The parsers themselves are on the feature list (`features/index.ts`), which `loadConfig`
 * (config.ts) reads; so this file, which types `deps.config`, imports no feature.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging
export interface FeatureConfigs {}

/** The parsers of feature settings, each under the key of `deps.config` it fills. */
export type FeatureConfigParsers = { readonly [Key in keyof FeatureConfigs]: z.ZodType<FeatureConfigs[Key]> };

export type Config = z.output<typeof serverConfigFrom> & PlatformConfigs & FeatureConfigs;

export class ConfigError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`Invalid configuration:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** The variables that are set: an empty one counts as unset. */
const presentOf = (env: EnvVariables) => Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));

/**
 * The server-wide part alone, or undefined when it is wrong (`readConfig` then says why): where
 * the data and the database are, read before the features' modules load (`config.ts` imports
 * every feature, whose settings parsers are on the feature list), so that `svc-server start` can
 * start the embedded database's process meanwhile.
 */
export function serverConfigOf(env: EnvVariables): z.output<typeof serverConfigFrom> | undefined {
  const parsed = serverConfigFrom.safeParse(presentOf(env));
  return parsed.success ? parsed.data : undefined;
}

/** A bad value as it may be shown: never a secret, and never a database password. */
function shownValue(name: string, value: string | undefined): string {
  if (value === undefined) return '""';
  if (/TOKEN|SECRET|KEY/.test(name)) return `(${value.length} characters, not shown)`;
  return JSON.stringify(value.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@'));
}

/**
 * Reads the configuration from `env` with the server's, the platform's and the given features'
 * parsers, checked before anything starts so that a typo stops the server with a message naming
 * the variable rather than failing later. Every part is read, so one ConfigError lists every bad
 * variable at once. `loadConfig` (config.ts) passes the feature list's parsers.
 */
export function readConfig(env: EnvVariables, featureParsers: FeatureConfigParsers): Config {
  const present = presentOf(env);
  const issues: string[] = [];
  const read = (settings: z.ZodType): unknown => {
    const parsed = settings.safeParse(present);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      // An issue on one variable names it and shows its value; a whole-part one (the models file, x402's tables) says where itself.
      const name = issue.path[0];
      issues.push(name === undefined ? issue.message : `${String(name)}=${shownValue(String(name), present[String(name)])}: ${issue.message}`);
    }
    return undefined;
  };
  const server = read(serverConfigFrom);
  const parts = Object.fromEntries(Object.entries({ ...platformConfigs, ...featureParsers }).map(([key, settings]) => [key, read(settings)]));
  if (issues.length > 0) throw new ConfigError(issues);
  // Each part parsed without an issue, so each holds its schema's output.
  return { ...(server as z.output<typeof serverConfigFrom>), ...(parts as unknown as PlatformConfigs & FeatureConfigs) };
}

/** Public URLs default to the listen address. */
export function publicUrls(config: Config, listening?: { port: number; apiPort?: number }): { baseUrl: string; apiUrl: string } {
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const basePort = listening?.port ?? config.port;
  const baseUrl = config.publicUrl ?? `http://${host}:${basePort}`;
  const apiPort = listening?.apiPort ?? config.apiPort;
  const apiUrl = config.publicApiUrl ?? (apiPort !== undefined && config.apiPort !== undefined ? `http://${host}:${apiPort}` : baseUrl);
  return { baseUrl, apiUrl };
}
