import { packageBuild } from '../../tsup.shared.ts';

// `core` and `blackboard` are the subpaths a program loads instead of the whole contract (the CLI's start-up).
export default packageBuild({ index: 'src/index.ts', core: 'src/core.ts', blackboard: 'src/blackboard/index.ts' });
