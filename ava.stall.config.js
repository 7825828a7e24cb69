// The stall suite alone: it measures the server's event-loop delay against a 100 ms budget, so it
// runs after the main suite with no other test file beside it (`pnpm test` runs both lanes).
export default {
  files: ['packages/server/test/stall-suite.test.ts'],
  extensions: { ts: 'module' },
  timeout: '5m',
  workerThreads: false,
  concurrency: 1,
  environmentVariables: { SVC_LOG_LEVEL: 'silent' },
};
