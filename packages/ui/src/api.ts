import { createContractClient, resolveOptions, Transport, type ClientOf } from '@svc/client';
import { systemContract, type ContractTree } from '@svc/schemas';
import { firstLoadFetch } from './first-load.ts';
import { accessToken } from './session.ts';

export interface Surfaces {
  /** The base surface as this page reaches it: its own origin. */
  baseUrl: string;
  apiUrl: string;
  /** The base surface's public URL: the OAuth issuer. */
  issuer: string;
}

/** The console is served by the base surface; where the api surface listens, `/` says (it may have its own port). */
let surfaces: Promise<Surfaces> | undefined;
export function surfacesOnce(): Promise<Surfaces> {
  surfaces ??= (async () => {
    const baseUrl = location.origin;
    const root = createContractClient({ root: systemContract.root }, new Transport(resolveOptions({ baseUrl, retry: 2, fetch: firstLoadFetch })));
    const described = await root.methods.root();
    return { baseUrl, apiUrl: new URL(described.surfaces.api).origin, issuer: described.surfaces.base };
  })().catch((error: unknown) => {
    surfaces = undefined;
    throw error;
  });
  return surfaces;
}

/**
 * A client for part of the contract, derived exactly as `createClient` derives the whole one.
 * Each page asks only for the features it shows, so the board's first load carries the
 * blackboard's schemas and not the other fifteen features' (the bundle stays small).
 * Calls carry the signed-in token when there is one; the token never goes into a URL.
 */
export async function clientFor<C extends ContractTree>(tree: C): Promise<ClientOf<C>> {
  const urls = await surfacesOnce();
  const transport = new Transport(resolveOptions({ ...urls, retry: 1, token: () => accessToken(), fetch: firstLoadFetch }));
  return createContractClient(tree, transport).methods;
}
