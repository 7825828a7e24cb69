import { packageBuild } from '../../tsup.shared.ts';

// `core` and `blackboard` load one feature's contract, not the whole of it (the CLI's start-up).
export default packageBuild({ index: 'src/index.ts', core: 'src/core.ts', blackboard: 'src/blackboard/index.ts' });
