import test from 'ava';
import { operatorResolver } from '../src/http/auth.ts';
import { combineFeatures, type AnyFeature, type ContractHandlers, type Features } from '../src/features/feature.ts';

/** The runtime join, without the compile-time demand that the list own every contract key. */
const combinePartial = combineFeatures as (features: readonly AnyFeature[]) => Features;

const systemHandlers = {} as ContractHandlers['system'];
const modelsHandlers = {} as ContractHandlers['models'];
const resolver = operatorResolver('a-token-of-at-least-some-length');

test('the features are joined: handlers under their keys, resolvers and closers in list order', (t) => {
  const stopFirst = async () => {};
  const stopSecond = async () => {};
  const combined = combinePartial([
    { handlers: { system: systemHandlers }, resolvers: [resolver], close: stopFirst },
    { handlers: { models: modelsHandlers }, close: stopSecond, service: 'given to others, ignored here' },
  ]);
  t.is(combined.handlers.system, systemHandlers);
  t.is(combined.handlers.models, modelsHandlers);
  t.deepEqual(Object.keys(combined.handlers), ['system', 'models']);
  t.deepEqual(combined.resolvers, [resolver]);
  t.deepEqual(combined.closers, [stopFirst, stopSecond]);
});

test('a contract key two features claim stops the start, naming the key', (t) => {
  t.throws(() => combinePartial([{ handlers: { system: systemHandlers } }, { handlers: { system: systemHandlers } }]), {
    message: 'two features own the contract key "system"',
  });
});

test('a list that leaves a contract key unowned does not typecheck', (t) => {
  // The typecheck proves the demand: without it, this directive is itself an error.
  // @ts-expect-error: no feature in the list owns any contract key
  const combined = combineFeatures([{ handlers: { system: systemHandlers } }]);
  t.deepEqual(Object.keys(combined.handlers), ['system']);
});
