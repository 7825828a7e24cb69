import { packageBuild } from '../../tsup.shared.ts';

// The library entry; the bin is bundled apart, after this build, by scripts/build-bin.ts.
export default packageBuild(['src/index.ts']);
