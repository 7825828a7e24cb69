import { ServiceError } from '../../service-error.ts';

const SEGMENT = /^[A-Za-z0-9._+@=-]+$/;

/**
 * Checks a file path taken from a URL (already percent-decoded once by the router). Refuses
 * absolute paths, backslashes, "." and ".." segments, empty segments, control characters and
 * any "%" left after decoding (double-encoded traversal such as `%252e%252e`).
 */
export function checkFilePath(path: string): string {
  const refuse = (why: string) => {
    throw new ServiceError('invalid_path', `Invalid file path ${JSON.stringify(path.slice(0, 200))}: ${why}.`);
  };
  if (path.startsWith('/')) refuse('absolute paths are not allowed');
  if (path.includes('\\')) refuse('backslashes are not allowed');
  if (path.includes('%')) refuse('encoded characters are not allowed (encoded traversal)');
  if (/[\u0000-\u001f\u007f]/.test(path)) refuse('control characters are not allowed');
  for (const segment of path.split('/')) {
    if (segment === '') refuse('empty path segments are not allowed');
    if (segment === '.' || segment === '..') refuse('"." and ".." segments are not allowed (path traversal)');
    if (!SEGMENT.test(segment)) refuse('segments may hold only A-Z a-z 0-9 . _ + @ = -');
  }
  return path;
}
