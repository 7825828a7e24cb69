/**
 * `svc search --all --json | head -1`: once `head` has its line it closes the pipe, and the next
 * write fails with EPIPE. Node ignores SIGPIPE, so without a listener that error is thrown from
 * the stream and printed as a stack trace. The reader has what it wanted: end at once, quietly,
 * with exit 0 (as a pipeline under `set -o pipefail` expects of a reader that stopped early).
 */
export function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}
