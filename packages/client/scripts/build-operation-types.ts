/**
 * Writes `packages/client/src/operations.ts`: a named request and answer type for every operation
 * of the contract (`blackboard.put` -> `BlackboardPutRequest`, `BlackboardPutResponse`; a paging
 * route's item too, `…Item`) and one interface per feature declaring its methods with them, so an
 * editor's hover and the published `.d.ts` name `Promise<BlackboardPutResponse>` instead of
 * spelling out the route's schemas. Each type is an alias of the contract's inference
 * (`ClientResponse<Contract['blackboard']['put']>`): nothing is written twice, and
 * `operation-types.test.ts` checks both ways that the interfaces are the derived client's.
 * `--check` fails (exit 1) when the file differs from what the contract gives now.
 *
 * Run: pnpm exec node packages/client/scripts/build-operation-types.ts [--check]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { contract, isRoute, type ContractTree, type RouteDefinition } from '@svc/schemas';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const target = fileURLToPath(new URL('../src/operations.ts', import.meta.url));
const pascal = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** Whether a call must pass its request: a route with path parameters, bytes, or a body that is not optional. */
function requestRequired(route: RouteDefinition): boolean {
  if (route.params) return true;
  if (route.body && (route as { bodyEncoding?: string }).bodyEncoding === 'bytes') return true;
  return route.body !== undefined && !route.body.safeParse(undefined).success;
}

const names = new Map<string, string>();
const declarations: string[] = [];
const features: string[] = [];
for (const [feature, tree] of Object.entries(contract as ContractTree)) {
  if (isRoute(tree)) throw new Error(`${feature}: a route at the contract's top level has no feature`);
  const members: string[] = [];
  for (const [operation, route] of Object.entries(tree)) {
    if (!isRoute(route)) throw new Error(`${feature}.${operation}: operations nest one level deep`);
    const base = `${pascal(feature)}${pascal(operation)}`;
    const id = `${feature}.${operation}`;
    const other = names.get(base);
    if (other) throw new Error(`${id} and ${other} would both be named ${base}`);
    names.set(base, id);
    const routeType = `Contract['${feature}']['${operation}']`;
    const summary = route.summary.replace(/\*\//g, '*\\/');
    declarations.push(
      `/** The request of \`${id}\` (${route.method} ${route.path}). */`,
      `export type ${base}Request = ClientRequest<${routeType}>;`,
      `/** The answer of \`${id}\`: ${summary} */`,
      `export type ${base}Response = ClientResponse<${routeType}>;`,
    );
    const optional = requestRequired(route) ? '' : '?';
    if (route.paging) {
      // An interface of its own, so a hover names it (a generic alias's arguments are shown spelled out).
      declarations.push(
        `/** One item of \`${id}\`'s list. */`,
        `export type ${base}Item = ItemOf<${routeType}>;`,
        `/** \`${id}\`: one page per call; \`.all()\` walks every item, \`.pages()\` every page. */`,
        `export interface ${base}Method {`,
        `  (request${optional}: ${base}Request, options?: CallOptions): Promise<${base}Response>;`,
        '  /** Every item over every page, fetched lazily as the loop asks; `limit` caps the total. */',
        `  all(request${optional}: ${base}Request, options?: ItemWalkOptions): AsyncGenerator<${base}Item, void, undefined>;`,
        '  /** The page objects themselves (cursors, counts and all), fetched lazily; `maxPages` caps them. */',
        `  pages(request${optional}: ${base}Request, options?: PageWalkOptions): AsyncGenerator<${base}Response, void, undefined>;`,
        '}',
      );
      members.push(`  /** ${summary} (\`${route.method} ${route.path}\`). */`, `  readonly ${operation}: ${base}Method;`);
    } else {
      members.push(
        `  /** ${summary} (\`${route.method} ${route.path}\`). */`,
        `  ${operation}(request${optional}: ${base}Request, options?: CallOptions): Promise<${base}Response>;`,
      );
    }
  }
  features.push(`/** The \`${feature}\` methods. */`, `export interface ${pascal(feature)}Methods {`, ...members, '}');
}

const text = `// Written by packages/client/scripts/build-operation-types.ts from the contract; do not edit.
import type { ClientRequest, ClientResponse, Contract } from '@svc/schemas';
import type { ItemOf } from './derive.ts';
import type { ItemWalkOptions, PageWalkOptions } from './paging.ts';
import type { CallOptions } from './transport.ts';

${declarations.join('\n')}

${features.join('\n')}

/** Each feature's methods, by its contract key. */
export interface ContractMethods {
${Object.keys(contract)
  .map((feature) => `  readonly ${feature}: ${pascal(feature)}Methods;`)
  .join('\n')}
}
`;

// Formatted as the repository formats it (biome reads the text on stdin and names it for its settings).
const formatted = execFileSync(`${ROOT}node_modules/.bin/biome`, ['format', `--stdin-file-path=${target}`], { cwd: ROOT, input: text, encoding: 'utf8' });
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {}
  if (current !== formatted) {
    process.stderr.write(`${target} is out of date: run pnpm exec node packages/client/scripts/build-operation-types.ts\n`);
    process.exit(1);
  }
} else writeFileSync(target, formatted);
