// The corpus lane (`pnpm test:corpus`): tests over corpora fetched from outside the repository.
// The Debian PDF corpus comes from `apt-get download` (scripts/fetch-pdf-corpus.sh), so this lane
// needs apt and a Debian mirror; `pnpm test` needs neither.
export default {
  files: ['packages/server/test/pdf-corpus-debian.test.ts'],
  extensions: { ts: 'module' },
  timeout: '5m',
  workerThreads: false,
  concurrency: 1,
  environmentVariables: { SVC_LOG_LEVEL: 'silent' },
};
