import type { Command } from 'commander';
import { registerHealthCommands } from './health.ts';
import { registerPdfCommands } from './pdf.ts';
import { registerVersionCommands } from './version.ts';

/** Every command group; a feature adds its `register…Commands` here. */
export function registerCommands(program: Command): void {
  registerHealthCommands(program);
  registerVersionCommands(program);
  registerPdfCommands(program);
}
