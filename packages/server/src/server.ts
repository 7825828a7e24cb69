import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { contract, type Surface } from '@svc/schemas';
import { publicUrls, type Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import type { EmbeddedPostgres } from './db/embedded.ts';
import { runMigrations } from './db/migrate.ts';
import { pruneWindows } from './db/rate-counters.ts';
import type { ServerDeps, TestSeams } from './deps.ts';
import { createFeatures } from './features/index.ts';
import { CacheRegistry } from './observability/cache-registry.ts';
import { ModelRegistry } from './features/models/model-registry.ts';
import { UsageHook } from './inference/usage-hook.ts';
import { operatorResolver } from './http/auth.ts';
import { BodyBudget } from './http/body-budget.ts';
import { AnswerBudget } from './http/answer-budget.ts';
import { buildContractApp } from './http/build-app.ts';
import { createKeyLimiter } from './key-limiter-wiring.ts';
import { ContractDispatch } from './http/dispatch.ts';
import { answerClientError } from './http/client-errors.ts';
import { watchResponseStalls } from './http/response-stall.ts';
import { corsPolicyFrom } from './http/cors.ts';
import { hostPolicyFrom } from './http/edge-checks.ts';
import { ServerLifecycle } from './lifecycle.ts';
import { findConsoleDirectory, loadConsoleFiles } from './console/console-files.ts';
import { startFirstPaint } from './console/first-paint.ts';
import { serveConsole } from './console/serve-console.ts';
import { createLogger } from './observability/logger.ts';
import { createHttpMetrics } from './observability/metrics.ts';
import { ensureOperatorToken } from './operator-token.ts';
import { Scheduler } from './scheduler.ts';
import { flushTraces, startTracing } from './observability/tracing.ts';

export interface SvcServer {
  readonly config: Config;
  readonly database: Database;
  readonly log: Logger;
  readonly operatorToken: string;
  /** Where a generated operator token was written; undefined when it came from configuration. */
  readonly operatorTokenFile: string | undefined;
  /** Koa app serving the base surface (and the api surface unless it has its own port). */
  readonly app: Koa;
  /** Koa app of the api surface when `SVC_API_PORT` gives it a listener of its own. */
  readonly apiApp: Koa | undefined;
  readonly deps: ServerDeps;
  listen(): Promise<{ baseUrl: string; apiUrl: string }>;
  urls(): { baseUrl: string; apiUrl: string };
  /** Stops accepting, drains in-flight requests (up to the shutdown timeout), then closes the database. */
  close(): Promise<void>;
}

export interface CreateServerOptions {
  logger?: Logger;
  /** The embedded database's process, already starting (see `openDatabase`). */
  embeddedDatabase?: Promise<EmbeddedPostgres>;
  /** For tests only: see TestSeams. */
  testSeams?: TestSeams;
}

/** Opens the database, runs migrations, builds every feature; does not listen. */
export async function createServer(config: Config, options: CreateServerOptions = {}): Promise<SvcServer> {
  const log = options.logger ?? createLogger(config.logLevel);
  const { token: operatorToken, file: operatorTokenFile } = await ensureOperatorToken(config.operatorToken, config.dataDir);
  await startTracing(log);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.databasePoolMax,
    log,
    ...(options.embeddedDatabase ? { embedded: options.embeddedDatabase } : {}),
  });
  try {
    await runMigrations(database.sequelize, log);
  } catch (error) {
    await database.close();
    throw error;
  }

  let listening: { port: number; apiPort?: number } | undefined;
  const urls = () => publicUrls(config, listening);
  const models = new ModelRegistry();
  const usage = new UsageHook((error) => log.error({ err: error }, 'a usage listener failed'));
  const lifecycle = new ServerLifecycle();
  const scheduler = new Scheduler(log);
  const deps: ServerDeps = {
    config,
    database,
    log,
    metrics: createHttpMetrics(),
    models,
    usage,
    caches: new CacheRegistry(),
    lifecycle,
    scheduler,
    startedAt: Date.now(),
    publicUrls: urls,
    dispatch: new ContractDispatch(),
    testSeams: options.testSeams,
  };
  // Counters of long-past windows are dead weight; any replica may prune them.
  scheduler.every('rate-counters.prune', 10 * 60_000, () => pruneWindows(database.sequelize, new Date(Date.now() - 2 * 86_400_000)));
  const keyLimits = createKeyLimiter(deps);
  const features = await createFeatures(deps);
  const resolvers = [operatorResolver(operatorToken), ...features.resolvers];

  // One budget for both listeners: memory is the process's, whichever surface a body comes in on.
  const bodyBudget = new BodyBudget(config.http.bodyBudgetBytes, config.http.bodyBudgetPerClientBytes);
  const answerBudget = new AnswerBudget(config.http.answerBudgetBytes, config.http.answerBudgetPerClientBytes);
  const consoleDirectory = config.console.enabled ? findConsoleDirectory() : undefined;
  const firstPaint = consoleDirectory ? startFirstPaint(consoleDirectory, config.console.firstPaintMs, options.testSeams?.firstPaintWorkerModule) : undefined;
  const webConsole = config.console.enabled
    ? serveConsole({
        files: consoleDirectory ? await loadConsoleFiles(consoleDirectory) : undefined,
        publicUrls: urls,
        metrics: deps.metrics,
        dispatch: deps.dispatch,
        ...(firstPaint ? { firstPaint } : {}),
      })
    : undefined;
  // The console's origin may call the api surface on its own port without SVC_CORS_ORIGINS.
  const cors = corsPolicyFrom(config.corsOrigins, webConsole ? () => new URL(urls().baseUrl).origin.toLowerCase() : undefined);
  const hosts = hostPolicyFrom({ listenHost: config.host, allowedHosts: config.allowedHosts, publicUrls: urls });
  const buildApp = (surfaces: readonly Surface[]): Koa =>
    buildContractApp({
      contract,
      handlers: features.handlers,
      surfaces,
      resolvers,
      openAccess: config.openAccess,
      validateResponses: config.validateResponses,
      sseKeepAliveMs: config.inference.keepAliveMs,
      trustProxy: config.trustProxy,
      publicUrls: urls,
      log,
      metrics: deps.metrics,
      cors,
      hosts,
      ...(webConsole && surfaces.includes('base') ? { before: webConsole } : {}),
      draining: () => lifecycle.draining,
      shutdownSignal: lifecycle.shutdownSignal,
      bodyBudget,
      answerBudget,
      bodyTimeoutMs: config.http.bodyTimeoutMs,
      keyLimits,
    });
  const separateApi = config.apiPort !== undefined;
  const app = buildApp(separateApi ? ['base'] : ['base', 'api']);
  const apiApp = separateApi ? buildApp(['api']) : undefined;
  deps.dispatch.attach({ base: app, api: apiApp });
  const httpServers: Server[] = [];

  const listenOne = (handler: Koa, port: number) =>
    new Promise<Server>((resolve, reject) => {
      const { http } = config;
      // Slow-client and size defences: a client trickling its headers (slowloris) or its body is
      // cut off by the deadlines, checked every second rather than Node's default 30 s.
      const server = createHttpServer(
        {
          headersTimeout: http.headersTimeoutMs,
          requestTimeout: http.requestTimeoutMs,
          keepAliveTimeout: http.keepAliveTimeoutMs,
          // Node refuses a request once the bytes it counts (the request target plus every header
          // name and value, without separators) REACH maxHeaderSize; the cap svc documents is the
          // largest size accepted, so Node's limit is one past it.
          maxHeaderSize: http.maxHeaderBytes + 1,
          connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs),
        },
        handler.callback(),
      );
      server.maxRequestsPerSocket = http.maxRequestsPerSocket;
      server.on('clientError', answerClientError);
      watchResponseStalls(server, http.responseStallMs);
      server.once('error', reject);
      server.listen(port, config.host, () => resolve(server));
    });

  let closing: Promise<void> | undefined;
  return {
    config,
    database,
    log,
    operatorToken,
    operatorTokenFile,
    app,
    apiApp,
    deps,
    urls,
    async listen() {
      const base = await listenOne(app, config.port);
      httpServers.push(base);
      const api = apiApp ? await listenOne(apiApp, config.apiPort!) : undefined;
      if (api) httpServers.push(api);
      listening = { port: (base.address() as AddressInfo).port, apiPort: api ? (api.address() as AddressInfo).port : undefined };
      return urls();
    },
    close() {
      closing ??= (async () => {
        // Readiness fails and event streams end at once; the listener stays open for the grace
        // period only, so a load balancer can notice before connections are refused.
        lifecycle.beginDrain();
        if (config.shutdownGraceMs > 0 && httpServers.length > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownGraceMs));
        await Promise.all(
          httpServers.map(
            (server) =>
              new Promise<void>((resolve) => {
                const force = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
                // close() only drops connections idle right now; one busy now turns idle when its
                // request is done and would otherwise stay open until the client or the force timer
                // closes it, so sweep again until every connection is gone.
                const sweep = setInterval(() => server.closeIdleConnections(), 50);
                server.close(() => {
                  clearTimeout(force);
                  clearInterval(sweep);
                  resolve();
                });
                server.closeIdleConnections();
              }),
          ),
        );
        // Housekeeping stops first (waiting for a prune running now), then the features, then the database they use.
        await scheduler.close();
        await firstPaint?.close();
        for (const close of features.closers.reverse()) await close().catch((error) => log.error({ err: error }, 'feature did not close cleanly'));
        // Places and tokens leased for busy keys go back for the other replicas (a killed replica's expire).
        await keyLimits.close().catch((error) => log.error({ err: error }, 'key limits did not close cleanly'));
        await database.close();
        await flushTraces();
      })();
      return closing;
    },
  };
}
