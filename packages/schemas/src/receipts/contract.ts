import { defineContract, defineRoute } from '../route.ts';
import { JsonWebKeySet, RECEIPT_JWKS_PATH } from './records.ts';

export const receiptsContract = defineContract({
  jwks: defineRoute({
    method: 'GET',
    path: RECEIPT_JWKS_PATH,
    surface: 'base',
    auth: { kind: 'public' },
    tags: ['receipts'],
    summary: 'Public keys (JWKS) that verify svc receipts, old keys included',
    description:
      "Anyone can verify a receipt offline with these keys alone: a compact JWS with typ `svc-receipt+jwt`, alg `EdDSA`, a `kid` naming one of these keys, and `iss` equal to this service's public base URL. A key stays here after rotation, so receipts signed before it stay verifiable. The authorization-server metadata points here as `jwks_uri`.",
    responses: { 200: JsonWebKeySet },
  }),
});
