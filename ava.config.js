// The main suite's settings (`pnpm test`); the other lanes (ava.lane.js, ava.engine.config.js) start
// from them. TypeScript runs as ES modules through Node's type stripping, each test file in a child
// process. Node's compile cache is on for those processes: without it every file's process strips
// and compiles the server's ~500 sources again (2.9-3.5 s of CPU to import the test server, against
// 2.0 s warm; a server test file took 7.9-10.5 s of CPU against 6.7-7.0 s), which was about a
// tenth of a test lane. The cache is keyed by each file's content, so an edit is never stale.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));

export default {
  files: [
    'packages/*/test/**/*.test.ts',
    'examples/*/test/**/*.test.ts',
    'test/**/*.test.ts',
    '!packages/server/test/stall-suite.test.ts',
    '!packages/server/test/stall-multiplexers.test.ts',
    '!packages/server/test/pdf-corpus-debian.test.ts',
    '!packages/server/test/pdf-corpus-shared.test.ts',
    '!test/packages-from-tarballs.test.ts',
  ],
  extensions: { ts: 'module' },
  timeout: '3m',
  workerThreads: false,
  // Test files at once: 2 by default (one per core); SVC_TEST_CONCURRENCY sets it. A quiet 22-file
  // slice of server tests took 83 s at 4 against 106-119 s at 2 on PostgreSQL, but a whole lane at 4
  // ran at load 10 and the console's search-as-you-type test typed slower than its debounce: CI keeps 2.
  concurrency: Number(process.env.SVC_TEST_CONCURRENCY ?? 2),
  environmentVariables: {
    SVC_LOG_LEVEL: 'silent',
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE ?? path.join(root, 'node_modules', '.cache', 'node-compile-cache'),
  },
};
