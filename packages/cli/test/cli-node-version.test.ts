import test from 'ava';
import { OLDEST_NODE_MAJOR, unsupportedNode } from '../src/node-version.ts';

// The bin checks this before loading its modules; the release lane runs the packed bin on an older Node.
test('a Node.js older than 22 is refused with a message naming both versions; 22 and newer run', (t) => {
  t.is(OLDEST_NODE_MAJOR, 22);
  t.is(
    unsupportedNode('20.20.2'),
    'svc needs Node.js 22 or newer; this is Node.js v20.20.2. Install a current Node.js (https://nodejs.org) and run svc again.',
  );
  t.regex(unsupportedNode('21.7.3') ?? '', /needs Node\.js 22 or newer; this is Node\.js v21\.7\.3/);
  for (const version of ['22.0.0', '22.22.2', '24.21.0', '26.1.0']) t.is(unsupportedNode(version), undefined, version);
  t.truthy(unsupportedNode('not-a-version'));
});
