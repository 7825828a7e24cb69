// The release lane (`pnpm test:release`): the four packages packed, installed from their
// tarballs into a fresh project, and a publish dry run. Installing the tarballs' third-party
// dependencies needs the npm registry (or a pnpm store that has them); `pnpm test` does not.
import { lane } from './ava.lane.js';

export default lane({ files: ['test/packages-from-tarballs.test.ts'], timeout: '20m' });
