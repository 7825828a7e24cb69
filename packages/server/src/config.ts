import path from 'node:path';
import { z } from 'zod';
import { blackboardEnvShape, blackboardSettingsFrom, type BlackboardSettings } from './features/blackboard/settings.ts';
import { Scope } from '@svc/schemas';
import { requestsEnvShape, requestsSettingsFrom, type RequestsSettings } from './features/requests/settings.ts';
import { pdfEnvShape, toPdfConfig, type PdfConfig } from './features/pdf/pdf-config.ts';
import { billingEnvShape, toBillingConfig, type BillingConfig } from './features/billing/billing-config.ts';
import { toX402Config, x402EnvShape, type X402Config } from './features/billing/x402-config.ts';
import { builtinModels } from './inference/builtin/builtin-provider.ts';
import { readInferenceSettings, upstreamEnvShape, type InferenceSettings } from './inference/openai-compatible/upstream-config.ts';
import { jobsEnvShape, toJobsConfig, type JobsConfig } from './features/jobs/jobs-config.ts';

/** An integer within bounds; the message says what was expected rather than "received NaN". */
const integer = (min: number, max: number, what = 'an integer') => {
  const expected = `expected ${what} from ${min} to ${max}`;
  return z.coerce.number({ error: expected }).int({ error: expected }).min(min, { error: expected }).max(max, { error: expected });
};
const port = integer(0, 65535, 'a port number');
const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');
const optionalUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional();

/**
 * Every setting, read from the environment and checked before anything starts, so a typo stops
 * the server with a message naming the variable rather than failing later.
 */
const EnvSchema = z.object({
  SVC_HOST: z.string().min(1).default('127.0.0.1'),
  SVC_PORT: port.default(8787),
  SVC_API_PORT: port.optional(),
  SVC_PUBLIC_URL: optionalUrl,
  SVC_PUBLIC_API_URL: optionalUrl,
  SVC_DATA_DIR: z.string().min(1).default('./.svc'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'expected a PostgreSQL URL such as postgres://user:password@host:5432/database' }).optional(),
  SVC_DATABASE_POOL_MAX: integer(1, 200).default(10),
  SVC_OPERATOR_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SVC_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SVC_SHUTDOWN_TIMEOUT_MS: integer(0, 600_000, 'milliseconds').default(10_000),
  SVC_SHUTDOWN_GRACE_MS: integer(0, 600_000, 'milliseconds').default(0),
  SVC_HTTP_HEADERS_TIMEOUT_MS: integer(100, 600_000, 'milliseconds').default(10_000),
  SVC_HTTP_REQUEST_TIMEOUT_MS: integer(1_000, 3_600_000, 'milliseconds').default(300_000),
  SVC_HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(100, 600_000, 'milliseconds').default(65_000),
  SVC_HTTP_MAX_REQUESTS_PER_SOCKET: integer(0, 1_000_000, 'a request count (0: unlimited)').default(1000),
  SVC_HTTP_MAX_HEADER_BYTES: integer(1024, 1_048_576, 'bytes').default(16_384),
  SVC_HTTP_BODY_BUDGET_BYTES: integer(1_048_576, 17_179_869_184, 'bytes').default(268_435_456),
  SVC_HTTP_BODY_TIMEOUT_MS: integer(100, 3_600_000, 'milliseconds').default(30_000),
  SVC_HTTP_RESPONSE_STALL_MS: integer(100, 3_600_000, 'milliseconds').default(30_000),
  SVC_CORS_ORIGINS: z
    .string()
    .default('')
    .transform((value) => value.split(',').map((origin) => origin.trim()).filter(Boolean))
    .pipe(z.array(z.union([z.literal('*'), z.string().regex(/^https?:\/\/[^/?#\s]+$/, 'an origin is scheme://host[:port], with no path')]), { error: 'expected * or comma-separated origins such as https://app.example' })),
  SVC_OPEN_ACCESS: flag.default(false),
  SVC_TRUST_PROXY: flag.default(false),
  SVC_VALIDATE_RESPONSES: flag.default(false),
  SVC_STORAGE: z.enum(['local', 'gcs']).default('local'),
  SVC_STORAGE_BUCKET: z.string().regex(/^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$/, 'must be a valid bucket name').default('svc-catalog'),
  SVC_STORAGE_SIGNING_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  SVC_STORAGE_URL_TTL_SECONDS: z.coerce.number().int().min(1).max(300).default(300),
  SVC_GCS_PROJECT: z.string().min(1).optional(),
  SVC_CATALOG_DEMO: z.enum(['auto', 'on', 'off']).default('auto'),
  SVC_COMPLETION_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
  ...blackboardEnvShape,
  SVC_SIGNING_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  SVC_OAUTH_ACCESS_TOKEN_TTL_SECONDS: integer(60, 86_400, 'seconds').default(3600),
  SVC_OAUTH_REFRESH_TOKEN_TTL_SECONDS: integer(300, 31_536_000, 'seconds').default(2_592_000),
  SVC_OAUTH_CODE_TTL_SECONDS: integer(1, 600, 'seconds').default(60),
  SVC_OAUTH_TOKEN_RATE_PER_MINUTE: integer(1, 100_000, 'requests per minute').default(60),
  SVC_OAUTH_REGISTER_RATE_PER_MINUTE: integer(1, 100_000, 'registrations per minute').default(20),
  SVC_DEVELOPER_KEYS_MAX_ACTIVE: integer(1, 1000, 'a key count').default(20),
  SVC_RECEIPT_KEY_GENERATION: integer(1, 1_000_000, 'a key generation').default(1),
  SVC_DEMO_TOKEN: z.string().min(8, 'must be at least 8 characters').optional(),
  SVC_DEMO_SCOPES: z
    .string()
    .default('models:read inference:invoke')
    .transform((value) => value.split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(Scope, { error: 'expected scopes separated by spaces or commas' }).min(1)),
  ...pdfEnvShape,
  ...billingEnvShape,
  ...requestsEnvShape,
  ...x402EnvShape,
  ...upstreamEnvShape,
  ...jobsEnvShape,
});

export type Env = z.input<typeof EnvSchema>;

export interface Config {
  host: string;
  port: number;
  /** When set, the api surface gets its own listener on this port. */
  apiPort: number | undefined;
  publicUrl: string | undefined;
  publicApiUrl: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolMax: number;
  operatorToken: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['SVC_LOG_LEVEL'];
  shutdownTimeoutMs: number;
  /** How long `/readyz` fails before the listener closes, so a load balancer notices first (0: close at once). */
  shutdownGraceMs: number;
  /** Slow-client and size defences of the HTTP listener. */
  http: {
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxRequestsPerSocket: number;
    maxHeaderBytes: number;
    /** Bytes of request bodies that may be in flight at once, server-wide; past it a body is refused before it is read. */
    bodyBudgetBytes: number;
    /** Deadline for a whole body on routes that name none of their own. */
    bodyTimeoutMs: number;
    /** A response whose connection takes none of its pending bytes for this long is destroyed. */
    responseStallMs: number;
  };
  /** Origins a browser may call every route from (`*`: any); discovery documents are open to all. */
  corsOrigins: string[];
  /** Callers with no credential act as the open-auth principal on scoped routes. */
  openAccess: boolean;
  /** Read the client address from X-Forwarded-For (only behind a proxy you control). */
  trustProxy: boolean;
  /** Check every response against the contract (tests turn this on). */
  validateResponses: boolean;
  /** Where hosted catalog files live: the built-in store under the data directory, or Google Cloud Storage. */
  storage: {
    kind: 'local' | 'gcs';
    bucket: string;
    /** HMAC key of the built-in store's signed URLs; generated into the data directory when absent. */
    signingKey: string | undefined;
    urlTtlSeconds: number;
    gcsProject: string | undefined;
  };
  catalog: {
    /** `auto`: load the demo catalog into an empty embedded database; `on`: into any empty database. */
    demo: 'auto' | 'on' | 'off';
    completionTokenTtlSeconds: number;
  };
  /** Blackboard retention, window and admission caps (defaults are the spec's). */
  blackboard: BlackboardSettings;
  identity: IdentityConfig;
  /** PDF parser workers, deadlines and limits. */
  pdf: PdfConfig;
  /** Stripe and credit holds. */
  billing: BillingConfig;
  /** Per-principal limits on new catalog requests. */
  requests: RequestsSettings;
  /** x402 pay-per-call: pay-to address, network, asset, facilitator. */
  x402: X402Config;
  /** OpenAI-compatible upstreams and their models (none: only the built-in engine), stream keep-alives. */
  inference: InferenceSettings;
  /** Batch job workers, leases, caps and retention. */
  jobs: JobsConfig;
}

export interface IdentityConfig {
  /** Secret the OAuth signing keys derive from; replicas must share it. Absent: generated into the data directory. */
  signingSecret: string | undefined;
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  codeTtlSeconds: number;
  /** Token-endpoint requests per client IP per minute (the demo tier's limit). */
  tokenRatePerMinute: number;
  /** Client registrations per client IP per minute. */
  registerRatePerMinute: number;
  maxActiveDeveloperKeys: number;
  /**
   * Which receipt signing key (derived from the signing secret) signs new receipts. Raise it to
   * rotate: keys used before stay published, so their receipts stay verifiable.
   */
  receiptKeyGeneration: number;
  /** A publishable credential for the shared demo principal; absent means no demo principal. */
  demoToken: string | undefined;
  demoScopes: Scope[];
}

export class ConfigError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`Invalid configuration:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** A bad value as it may be shown: never a secret, and never a database password. */
function shownValue(name: string, value: string | undefined): string {
  if (value === undefined) return '""';
  if (/TOKEN|SECRET|KEY/.test(name)) return `(${value.length} characters, not shown)`;
  return JSON.stringify(value.replace(/(\/\/[^:/@]*:)[^@/]*@/, '$1***@'));
}

/** Reads the configuration from `env`; throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0]);
        return `${name}=${shownValue(name, present[name])}: ${issue.message}`;
      }),
    );
  }
  const e = parsed.data;
  const x402 = toX402Config(e);
  if ('error' in x402) throw new ConfigError([x402.error]);
  // The models file is read and checked here, at start-up, with every issue naming its entry.
  const inferenceIssues: string[] = [];
  const inference = readInferenceSettings(e, env, builtinModels.map((model) => model.id), inferenceIssues);
  if (inferenceIssues.length > 0) throw new ConfigError(inferenceIssues);
  return {
    host: e.SVC_HOST,
    port: e.SVC_PORT,
    apiPort: e.SVC_API_PORT,
    publicUrl: e.SVC_PUBLIC_URL?.replace(/(?<!\/)\/+$/, ''),
    publicApiUrl: e.SVC_PUBLIC_API_URL?.replace(/(?<!\/)\/+$/, ''),
    dataDir: path.resolve(e.SVC_DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.SVC_DATABASE_POOL_MAX,
    operatorToken: e.SVC_OPERATOR_TOKEN,
    logLevel: e.SVC_LOG_LEVEL,
    shutdownTimeoutMs: e.SVC_SHUTDOWN_TIMEOUT_MS,
    shutdownGraceMs: e.SVC_SHUTDOWN_GRACE_MS,
    http: {
      headersTimeoutMs: e.SVC_HTTP_HEADERS_TIMEOUT_MS,
      // Node refuses a header deadline longer than the whole-request one.
      requestTimeoutMs: Math.max(e.SVC_HTTP_REQUEST_TIMEOUT_MS, e.SVC_HTTP_HEADERS_TIMEOUT_MS),
      keepAliveTimeoutMs: e.SVC_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxRequestsPerSocket: e.SVC_HTTP_MAX_REQUESTS_PER_SOCKET,
      maxHeaderBytes: e.SVC_HTTP_MAX_HEADER_BYTES,
      bodyBudgetBytes: e.SVC_HTTP_BODY_BUDGET_BYTES,
      bodyTimeoutMs: e.SVC_HTTP_BODY_TIMEOUT_MS,
      responseStallMs: e.SVC_HTTP_RESPONSE_STALL_MS,
    },
    corsOrigins: e.SVC_CORS_ORIGINS,
    openAccess: e.SVC_OPEN_ACCESS,
    trustProxy: e.SVC_TRUST_PROXY,
    validateResponses: e.SVC_VALIDATE_RESPONSES,
    storage: { kind: e.SVC_STORAGE, bucket: e.SVC_STORAGE_BUCKET, signingKey: e.SVC_STORAGE_SIGNING_KEY, urlTtlSeconds: e.SVC_STORAGE_URL_TTL_SECONDS, gcsProject: e.SVC_GCS_PROJECT },
    catalog: { demo: e.SVC_CATALOG_DEMO, completionTokenTtlSeconds: e.SVC_COMPLETION_TOKEN_TTL_SECONDS },
    blackboard: blackboardSettingsFrom(e),
    identity: {
      signingSecret: e.SVC_SIGNING_SECRET,
      accessTokenTtlSeconds: e.SVC_OAUTH_ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: e.SVC_OAUTH_REFRESH_TOKEN_TTL_SECONDS,
      codeTtlSeconds: e.SVC_OAUTH_CODE_TTL_SECONDS,
      tokenRatePerMinute: e.SVC_OAUTH_TOKEN_RATE_PER_MINUTE,
      registerRatePerMinute: e.SVC_OAUTH_REGISTER_RATE_PER_MINUTE,
      maxActiveDeveloperKeys: e.SVC_DEVELOPER_KEYS_MAX_ACTIVE,
      receiptKeyGeneration: e.SVC_RECEIPT_KEY_GENERATION,
      demoToken: e.SVC_DEMO_TOKEN,
      demoScopes: e.SVC_DEMO_SCOPES,
    },
    pdf: toPdfConfig(e),
    billing: toBillingConfig(e),
    requests: requestsSettingsFrom(e),
    x402,
    inference,
    jobs: toJobsConfig(e),
  };
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
