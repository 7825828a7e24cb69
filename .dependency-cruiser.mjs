/**
 * The import boundaries `pnpm lint:deps` checks (CI runs it after the typecheck). What each rule
 * protects is in its comment; docs/architecture.md says how the server is layered.
 * @type {import('dependency-cruiser').IConfiguration}
 */
const FEATURES = '^packages/server/src/features/';

export default {
  forbidden: [
    {
      name: 'no-file-cycles',
      comment: 'A cycle (type-only ones too) makes load order matter and the two files one unit in all but name.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-feature-cycles',
      comment: 'Features form a graph with one direction: a feature that needs another is built after it and given it.',
      severity: 'error',
      scope: 'folder',
      from: { path: `${FEATURES}[^/]+$` },
      to: { path: `${FEATURES}[^/]+$`, circular: true },
    },
    {
      name: 'feature-imports-feature-index-only',
      comment: "A feature reaches another only through that feature's index.ts, its public face; shared code that is no feature's lives a level down.",
      severity: 'error',
      from: { path: `${FEATURES}([^/]+)/` },
      to: { path: `${FEATURES}[^/]+/`, pathNot: [`${FEATURES}$1/`, `${FEATURES}[^/]+/index\\.ts$`] },
    },
    {
      name: 'engine-imports-no-feature',
      comment: 'The inference engines sit below the features: features call engines, never the other way round.',
      severity: 'error',
      from: { path: '^packages/server/src/inference/' },
      to: { path: FEATURES },
    },
    {
      name: 'schemas-import-no-package',
      comment: 'The contract is the bottom layer: the server, the client and the CLI all build on it.',
      severity: 'error',
      from: { path: '^packages/schemas/' },
      to: { path: '^packages/(server|client|cli)/' },
    },
    {
      name: 'client-imports-no-server-or-cli',
      comment: 'The client is published on its own and talks to the server over HTTP only.',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: { path: '^packages/(server|cli)/' },
    },
    {
      name: 'server-imports-no-client-or-cli',
      comment: 'The server never calls its own client (its tests may, to test through it).',
      severity: 'error',
      from: { path: '^packages/server/src/' },
      to: { path: '^packages/(client|cli)/' },
    },
    {
      name: 'ui-imports-no-server-or-cli',
      comment: 'The web console is a browser client of the API: it calls it through @svc/client, never server code.',
      severity: 'error',
      from: { path: '^packages/ui/src/' },
      to: { path: '^packages/(server|cli)/' },
    },
    {
      name: 'cli-imports-no-server',
      comment: 'The CLI is a client of the API: it goes through @svc/client.',
      severity: 'error',
      from: { path: '^packages/cli/src/' },
      to: { path: '^packages/server/' },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import the cruiser cannot resolve would be invisible to every rule above.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports are edges too: a type-only cycle is still a cycle (issue 27).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // Built output (dist/, dist-start/, the console's build in packages/server/console/) and hidden folders (caches, scratch) are not sources.
    exclude: { path: '(^|/)(node_modules|dist[^/]*|\\.[^/]+)/|^packages/server/console/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'types', 'node', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'],
    },
  },
};
