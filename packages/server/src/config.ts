import path from 'node:path';
import { z } from 'zod';
import { pdfEnvShape, toPdfConfig, type PdfConfig } from './features/pdf/pdf-config.ts';

const port = z.coerce.number().int().min(0).max(65535);
const flag = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');
const optionalUrl = z.url({ protocol: /^https?$/ }).optional();

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
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  SVC_DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  SVC_OPERATOR_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SVC_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SVC_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  SVC_OPEN_ACCESS: flag.default(false),
  SVC_TRUST_PROXY: flag.default(false),
  SVC_VALIDATE_RESPONSES: flag.default(false),
  ...pdfEnvShape,
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
  /** Callers with no credential act as the open-auth principal on scoped routes. */
  openAccess: boolean;
  /** Read the client address from X-Forwarded-For (only behind a proxy you control). */
  trustProxy: boolean;
  /** Check every response against the contract (tests turn this on). */
  validateResponses: boolean;
  /** PDF parser workers, deadlines and limits. */
  pdf: PdfConfig;
}

export class ConfigError extends Error {
  readonly issues: string[];
  constructor(issues: string[]) {
    super(`Invalid configuration:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** Reads the configuration from `env`; throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0]);
        return `${name}=${JSON.stringify(present[name] ?? '')}: ${issue.message}`;
      }),
    );
  }
  const e = parsed.data;
  return {
    host: e.SVC_HOST,
    port: e.SVC_PORT,
    apiPort: e.SVC_API_PORT,
    publicUrl: e.SVC_PUBLIC_URL?.replace(/\/+$/, ''),
    publicApiUrl: e.SVC_PUBLIC_API_URL?.replace(/\/+$/, ''),
    dataDir: path.resolve(e.SVC_DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.SVC_DATABASE_POOL_MAX,
    operatorToken: e.SVC_OPERATOR_TOKEN,
    logLevel: e.SVC_LOG_LEVEL,
    shutdownTimeoutMs: e.SVC_SHUTDOWN_TIMEOUT_MS,
    openAccess: e.SVC_OPEN_ACCESS,
    trustProxy: e.SVC_TRUST_PROXY,
    validateResponses: e.SVC_VALIDATE_RESPONSES,
    pdf: toPdfConfig(e),
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
