// The stall suites alone: they measure the server's event-loop delay against a 100 ms budget (and
// the multiplexers' memory and CPU against their twins'), so they run after the main suite, one
// file at a time, with no other test file beside them (`pnpm test` runs both lanes).
import { lane } from './ava.lane.js';

export default lane({ files: ['packages/server/test/stall-suite.test.ts', 'packages/server/test/stall-multiplexers.test.ts'], timeout: '5m' });
