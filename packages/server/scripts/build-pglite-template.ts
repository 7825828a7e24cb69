/** Makes the PGlite template that lets a new embedded database start fast (run at install time). */
import { buildTemplate } from '../src/db/pglite-template.ts';

const { file, created } = await buildTemplate();
process.stdout.write(created ? `svc: embedded database template written to ${file}\n` : `svc: embedded database template present (${file})\n`);
