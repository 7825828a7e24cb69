// The engine lane (`pnpm test:engine`): the tests whose outcome can depend on the database engine
// under the server, that is the server's own tests and the test kit's. CI runs the whole suite on
// PostgreSQL and this lane again on the embedded database (PGlite): the CLI, client, console,
// example and repository tests reach the database only through the server's routes, which the
// server's tests cover on both engines, so a second pass of them proves nothing new and took about
// a fifth of that lane's time. Locally, `pnpm test` still runs every file.
import main from './ava.config.js';

const SERVER_SIDE = ['packages/server/test/**/*.test.ts', 'packages/testing/test/**/*.test.ts'];
const EXCLUDED = main.files.filter((pattern) => pattern.startsWith('!'));

export default { ...main, files: [...SERVER_SIDE, ...EXCLUDED] };
