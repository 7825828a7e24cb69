import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import type { z } from 'zod';
import { featureConfigs, serverConfigFrom } from '../src/config.ts';

/** The repository's root, where README.md and docs/ are. */
const root = new URL('../../../', import.meta.url);

/** The README and every guide under docs/, as one text. */
const documentation = [
  readFileSync(new URL('README.md', root), 'utf8'),
  ...readdirSync(new URL('docs/', root))
    .filter((name) => name.endsWith('.md'))
    .map((name) => readFileSync(new URL(`docs/${name}`, root), 'utf8')),
].join('\n');

/** Each part's variables: the keys of the object its transform reads. */
const variablesOf = (settings: { in: z.ZodType }) => Object.keys((settings.in as z.ZodObject).shape);

test('every environment variable the server reads is named, whole, in the README or a guide under docs/', (t) => {
  const variables = [serverConfigFrom, ...Object.values(featureConfigs)].flatMap(variablesOf);
  t.true(variables.length > 90, `${variables.length} variables found in ${fileURLToPath(root)}`);
  const undocumented = variables.filter((variable) => !new RegExp(`\\b${variable}\\b`).test(documentation));
  t.deepEqual(undocumented, []);
});
