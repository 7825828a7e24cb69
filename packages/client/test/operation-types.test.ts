import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'ava';
import type { Contract } from '@svc/schemas';
import type { ClientOf } from '../src/derive.ts';
import type { ContractMethods } from '../src/operations.ts';

// Checked by `pnpm typecheck`: the named interfaces are the derived client, both ways, for every feature.
export const namedFromDerived = (derived: ClientOf<Contract>): ContractMethods => derived;
export const derivedFromNamed = (named: ContractMethods): ClientOf<Contract> => named;

/** Whether two types are identical (not merely assignable: an optional request is assignable where a required one is asked). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Call<M> = M extends (...args: infer A) => infer R ? [A, R] : never;
/** The operations whose named method takes or answers other than the derived one does, by id. */
type Mismatched = {
  [F in keyof Contract & keyof ContractMethods]: {
    [O in keyof Contract[F] & keyof ContractMethods[F]]: Same<Call<ContractMethods[F][O]>, Call<ClientOf<Contract>[F][O]>> extends true
      ? never
      : `${F}.${O & string}`;
  }[keyof Contract[F] & keyof ContractMethods[F]];
}[keyof Contract & keyof ContractMethods];
// A compile error here names the operations whose request (optional or required, its type) or answer differ.
export const everyOperationMatches: [Mismatched] extends [never] ? true : Mismatched = true;

test('operations.ts is what the contract gives now (else: run build-operation-types.ts)', async (t) => {
  const script = fileURLToPath(new URL('../scripts/build-operation-types.ts', import.meta.url));
  const { stderr } = await promisify(execFile)(process.execPath, [script, '--check'], { timeout: 120_000 });
  t.is(stderr, '');
});
