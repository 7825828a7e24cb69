/** The oldest Node.js major the CLI and the client run on (package.json's `engines`: >=22). */
export const OLDEST_NODE_MAJOR = 22;

/**
 * Why this Node.js cannot run the CLI, or undefined when it can. Checked before anything else is
 * imported: on Node 20 the client's modules fail to link (`worker_threads` has no
 * `isMarkedAsUntransferable` there) with a SyntaxError that says nothing of the version.
 */
export function unsupportedNode(version: string): string | undefined {
  const major = Number(version.replace(/^v/, '').split('.')[0]);
  if (Number.isInteger(major) && major >= OLDEST_NODE_MAJOR) return undefined;
  return `svc needs Node.js ${OLDEST_NODE_MAJOR} or newer; this is Node.js ${version.replace(/^v?/, 'v')}. Install a current Node.js (https://nodejs.org) and run svc again.`;
}
