// The stall suite alone: it measures the server's event-loop delay against a 100 ms budget, so it
// runs after the main suite with no other test file beside it (`pnpm test` runs both lanes).
import { lane } from './ava.lane.js';

export default lane({ files: ['packages/server/test/stall-suite.test.ts'], timeout: '5m' });
