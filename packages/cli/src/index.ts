export { buildProgram, main, EXIT_OK, EXIT_FAILURE, EXIT_USAGE } from './program.ts';
export { Output, table } from './output.ts';
export { CliFailure, UsageError } from './failure.ts';
export { withContext, contextFor, type CliContext, type GlobalOptions } from './context.ts';
