/**
 * The two servers of bench/http-overhead, each run in its own worker thread so the bench can
 * read the CPU time its thread spent serving (process.threadCpuUsage), apart from the load
 * generator's.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import Koa from 'koa';
import getRawBody from 'raw-body';
import { z } from 'zod';
import { defineContract, defineRoute } from '@svc/schemas';
import { buildContractApp, createHttpMetrics, createLogger, defineHandlers } from '@svc/server';

const Body = z.object({ text: z.string().max(1000), count: z.number().int().min(0).max(100) });
const Answer = z.object({ length: z.number(), count: z.number() });
const work = (body: z.infer<typeof Body>) => ({ length: body.text.length, count: body.count });

function contractApp(): Koa {
  const benchContract = defineContract({
    echo: defineRoute({
      method: 'POST',
      path: '/v1/echo',
      surface: 'base',
      auth: { kind: 'public' },
      summary: 'bench',
      body: Body,
      responses: { 200: Answer },
    }),
  });
  return buildContractApp({
    contract: benchContract,
    handlers: defineHandlers(benchContract, { echo: async ({ body }) => ({ status: 200, body: work(body) }) }),
    surfaces: ['base'],
    resolvers: [],
    openAccess: false,
    validateResponses: false,
    trustProxy: false,
    publicUrls: () => ({ baseUrl: 'http://127.0.0.1', apiUrl: 'http://127.0.0.1' }),
    log: createLogger('silent'),
    metrics: createHttpMetrics(),
  });
}

/**
 * The baseline: the endpoint's work by hand. With `sameHeaders` it also gives the headers every
 * svc response must carry (a request id of svc's length, `x-content-type-options: nosniff` and
 * the latency), so both sides send the same bytes; without, it is the bare minimum, reported for
 * reference.
 */
function plainApp(sameHeaders: boolean): Koa {
  const app = new Koa();
  let counter = 0;
  app.use(async (ctx) => {
    const started = performance.now();
    if (sameHeaders) {
      // svc's shape: `req_`, a 16-hex-digit process prefix and an 8-digit counter (request-id.ts).
      ctx.set('x-request-id', `req_0123456789abcdef${(++counter).toString(16).padStart(8, '0')}`);
      ctx.set('x-content-type-options', 'nosniff');
    }
    if (ctx.method !== 'POST' || ctx.path !== '/v1/echo') {
      ctx.status = 404;
      return;
    }
    const parsed = Body.safeParse(JSON.parse((await getRawBody(ctx.req, { limit: 1_048_576 })).toString('utf8')));
    if (!parsed.success) {
      ctx.status = 422;
      ctx.body = { error: 'invalid' };
      return;
    }
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(work(parsed.data));
    if (sameHeaders) ctx.set('x-svc-latency-ms', (performance.now() - started).toFixed(1));
  });
  return app;
}

const app = workerData.kind === 'contract' ? contractApp() : plainApp(workerData.kind === 'plain');
const server = createServer(app.callback());
server.listen(0, '127.0.0.1', () => parentPort!.postMessage({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
parentPort!.on('message', (message: string) => {
  if (message === 'cpu') parentPort!.postMessage({ cpu: process.threadCpuUsage() });
  if (message === 'close') server.close(() => process.exit(0));
});
