/** The contract's path filler and query writer, re-exported so callers of the client need not import the schemas. */
export { fillPath, toSearchParams } from '@svc/schemas/core';
