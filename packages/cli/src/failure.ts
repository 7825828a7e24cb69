/** A failure the CLI reports with exit code 1 (or `exitCode`: 130 after an interrupt); `silent` when the output already said why. */
export class CliFailure extends Error {
  readonly silent: boolean;
  readonly exitCode: number;
  constructor(message: string, options: { silent?: boolean; exitCode?: number } = {}) {
    super(message);
    this.silent = options.silent ?? false;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** A usage error (bad flag value, missing argument): exit code 2. */
export class UsageError extends Error {}
