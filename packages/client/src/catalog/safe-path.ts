const SAFE_SEGMENT = /^[A-Za-z0-9._+@=-]+$/;

/** A plan path must stay inside the destination directory, whatever the server says. */
export function isSafeRelativePath(filePath: string): boolean {
  return (
    filePath.length > 0 &&
    !filePath.startsWith('/') &&
    filePath.split('/').every((segment) => segment !== '.' && segment !== '..' && SAFE_SEGMENT.test(segment))
  );
}
