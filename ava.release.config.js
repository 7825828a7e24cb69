// The release lane (`pnpm test:release`): the four packages packed, installed from their
// tarballs into a fresh project, and a publish dry run. Installing the tarballs' third-party
// dependencies needs the npm registry (or a pnpm store that has them); `pnpm test` does not.
export default {
  files: ['test/packages-from-tarballs.test.ts'],
  extensions: { ts: 'module' },
  timeout: '10m',
  workerThreads: false,
  concurrency: 1,
  environmentVariables: { SVC_LOG_LEVEL: 'silent' },
};
