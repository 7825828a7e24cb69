/**
 * A bench's own arguments: `pnpm bench:<name> -- --rounds 3` hands node a literal `--` first,
 * which `parseArgs` would take as the end of the options (and then refuse what follows).
 */
export const benchArguments = (): string[] => process.argv.slice(2).filter((argument) => argument !== '--');
