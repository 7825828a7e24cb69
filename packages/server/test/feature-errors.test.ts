import test from 'ava';
import {
  contract,
  defineFeatureContract,
  defineRoute,
  errorCodes,
  featureErrorCodes,
  jobsErrors,
  mergeFeatureErrors,
  mergeFeatureRoutes,
  platformErrorCodes,
  statusForCode,
} from '@svc/schemas';
import { z } from 'zod';

const route = defineRoute({ surface: 'base', auth: { kind: 'public' }, method: 'GET', path: '/v1/one', summary: 'one', responses: { 200: z.object({}) } });
const widgets = defineFeatureContract({ routes: { widgets: { list: route } }, errors: { widget_not_found: 404 } });
const gadgets = defineFeatureContract({ routes: { gadgets: { list: route } }, errors: { gadget_not_found: 404 } });

test('a feature declares its codes beside its routes, and the root table holds them with their status', (t) => {
  t.is(errorCodes.job_not_found, 404);
  t.is(jobsErrors.job_not_found, 404);
  t.false('job_not_found' in platformErrorCodes, 'a code only jobs raise is not the platform table');
  t.is(statusForCode('jobs_active_limit:principal_jobs'), 429);
  t.is(statusForCode('validation_failed'), 422);
  t.is(statusForCode('no_such_code'), 500);
  t.deepEqual(Object.keys(errorCodes).sort(), [...Object.keys(platformErrorCodes), ...Object.keys(featureErrorCodes)].sort());
});

test('two features declaring one error code stop the merge, naming both', (t) => {
  t.deepEqual(mergeFeatureErrors([widgets, gadgets]), { widget_not_found: 404, gadget_not_found: 404 });
  const twin = defineFeatureContract({ routes: { twins: { list: route } }, errors: { widget_not_found: 410 } });
  const error = t.throws(() => mergeFeatureErrors([widgets, twin]));
  t.is(error?.message, 'the error code "widget_not_found" is declared twice: by widgets and by twins');
});

test('two features claiming one contract key stop the merge', (t) => {
  const error = t.throws(() => mergeFeatureRoutes([widgets, defineFeatureContract({ routes: { widgets: { other: route } } })]));
  t.regex(error?.message ?? '', /contract key "widgets" is declared twice/);
});

test('the merged contract keeps the order the features had before errors moved beside them', (t) => {
  t.deepEqual(Object.keys(contract), [
    'system',
    'models',
    'catalog',
    'blackboard',
    'oauth',
    'developerKeys',
    'pdf',
    'documents',
    'inference',
    'upstreams',
    'billing',
    'credits',
    'receipts',
    'requests',
    'discovery',
    'x402',
    'jobs',
    'responses',
    'mcp',
  ]);
});
