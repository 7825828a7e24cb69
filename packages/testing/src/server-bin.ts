import { fileURLToPath } from 'node:url';

/** The `svc-server` binary of the workspace's @svc/server, as `pnpm start` runs it (bin/svc-server.js, then the TypeScript sources). */
export const SERVER_BIN = fileURLToPath(new URL('../bin/svc-server.js', import.meta.resolve('@svc/server')));
