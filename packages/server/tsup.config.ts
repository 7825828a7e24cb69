import { packageBuild } from '../../tsup.shared.ts';

export default packageBuild(['src/index.ts', 'src/bin.ts', 'src/db/embedded-process.ts']);
