import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// V8's `gc` made available in a new context, so the test process needs no --expose-gc flag.
setFlagsFromString('--expose-gc');

/** A full garbage collection of the test process, now. */
export const collectGarbage = runInNewContext('gc') as () => void;
