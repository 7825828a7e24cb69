/** A failure the CLI reports with exit code 1; `silent` when the output already said why. */
export class CliFailure extends Error {
  readonly silent: boolean;
  constructor(message: string, options: { silent?: boolean } = {}) {
    super(message);
    this.silent = options.silent ?? false;
  }
}

/** A usage error (bad flag value, missing argument): exit code 2. */
export class UsageError extends Error {}
