import type { Command, Option } from 'commander';
import { UsageError } from '../failure.ts';

/**
 * `svc completion bash|zsh|fish`: a static completion script made by walking the command tree,
 * so a Tab never starts the CLI (its start-up costs about a second) and the script cannot drift
 * from the commands. No kept library writes static scripts from a commander program (tabtab and
 * omelette call the program back on every Tab), so this walker is svc's own.
 */
const SHELLS = ['bash', 'zsh', 'fish'] as const;
type Shell = (typeof SHELLS)[number];

interface Node {
  /** Words after `svc` that lead here, joined by spaces ('' for `svc` itself). */
  path: string;
  /** Subcommand names and aliases, each with its one-line description. */
  children: Array<{ word: string; description: string }>;
  /** Long and short flags of this command (the global ones are added at the top only). */
  flags: string[];
}

const flagsOf = (options: readonly Option[]) => options.flatMap((option) => [option.long, option.short].filter((flag): flag is string => Boolean(flag)));
const oneLine = (text: string) => text.split('\n', 1)[0]!.replace(/\s+/g, ' ').trim();

/** Every command's node; the program's own flags (`--json`, `--token` ...) are taken after any command, so every node offers them. */
function walk(command: Command, path: string, nodes: Node[], globalFlags: string[]): void {
  const visible = command.commands.filter((child) => !(child as unknown as { _hidden?: boolean })._hidden);
  nodes.push({
    path,
    children: visible.flatMap((child) => [child.name(), ...child.aliases()].map((word) => ({ word, description: oneLine(child.description()) }))),
    flags: [...new Set([...flagsOf(command.options), ...globalFlags, '--help'])],
  });
  for (const child of visible) for (const word of [child.name(), ...child.aliases()]) walk(child, path ? `${path} ${word}` : word, nodes, globalFlags);
}

/** `'` inside single quotes, for sh and fish alike. */
const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
const fishQuoted = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;

/** The two lookups every script shares, in sh syntax (bash and zsh): the children of a path, and its flags. */
function shFunctions(nodes: Node[]): string {
  const arm = (node: Node, words: string[]) => `    ${quoted(node.path)}) echo ${quoted(words.join(' '))} ;;`;
  return [
    '_svc_children() {',
    '  case "$1" in',
    ...nodes
      .filter((node) => node.children.length > 0)
      .map((node) =>
        arm(
          node,
          node.children.map((child) => child.word),
        ),
      ),
    '  esac',
    '}',
    '_svc_flags() {',
    '  case "$1" in',
    ...nodes.map((node) => arm(node, node.flags)),
    '  esac',
    '}',
    // The command path of the words typed so far: a word that names a child of the path so far
    // goes deeper; flags and their values do not.
    '_svc_path() {',
    // Not `path`: zsh ties that name to PATH.
    '  local svcpath="" word',
    '  for word in "$@"; do',
    '    case "$word" in -*) continue ;; esac',
    '    case " $(_svc_children "$svcpath") " in *" $word "*) svcpath="${svcpath:+$svcpath }$word" ;; esac',
    '  done',
    '  echo "$svcpath"',
    '}',
  ].join('\n');
}

function bash(nodes: Node[]): string {
  return [
    '# svc completion for bash: add `source <(svc completion bash)` to ~/.bashrc',
    shFunctions(nodes),
    '_svc_complete() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" svcpath',
    '  svcpath="$(_svc_path "${COMP_WORDS[@]:1:COMP_CWORD-1}")"',
    '  if [[ "$cur" == -* ]]; then',
    '    COMPREPLY=($(compgen -W "$(_svc_flags "$svcpath")" -- "$cur"))',
    '  else',
    '    COMPREPLY=($(compgen -W "$(_svc_children "$svcpath")" -- "$cur"))',
    '  fi',
    '}',
    'complete -o default -F _svc_complete svc',
    '',
  ].join('\n');
}

function zsh(nodes: Node[]): string {
  return [
    '#compdef svc',
    '# svc completion for zsh: add `source <(svc completion zsh)` to ~/.zshrc (after compinit)',
    shFunctions(nodes),
    '_svc() {',
    '  local svcpath',
    '  svcpath="$(_svc_path "${(@)words[2,CURRENT-1]}")"',
    '  if [[ "$PREFIX" == -* ]]; then',
    '    compadd -- ${=$(_svc_flags "$svcpath")}',
    '  else',
    '    local children="$(_svc_children "$svcpath")"',
    '    if [[ -n "$children" ]]; then compadd -- ${=children}; else _files; fi',
    '  fi',
    '}',
    'compdef _svc svc',
    '',
  ].join('\n');
}

function fish(nodes: Node[]): string {
  const arms = (pick: (node: Node) => string[]) =>
    nodes
      .map((node) => ({ node, lines: pick(node) }))
      .filter(({ lines }) => lines.length > 0)
      .map(({ node, lines }) => `    case ${fishQuoted(node.path)}\n${lines.map((line) => `      echo ${fishQuoted(line)}`).join('\n')}`);
  return [
    '# svc completion for fish: `svc completion fish > ~/.config/fish/completions/svc.fish`',
    'function __svc_children',
    '  switch "$argv[1]"',
    ...arms((node) => node.children.map((child) => (child.description ? `${child.word}\t${child.description}` : child.word))),
    '  end',
    'end',
    'function __svc_flags',
    '  switch "$argv[1]"',
    ...arms((node) => node.flags),
    '  end',
    'end',
    'function __svc_complete',
    '  set -l svcpath ""',
    '  for word in (commandline -opc)[2..-1]',
    "    string match -q -- '-*' $word; and continue",
    '    if contains -- $word (__svc_children "$svcpath" | string replace -r "\\t.*" "")',
    '      set svcpath (string trim -- "$svcpath $word")',
    '    end',
    '  end',
    "  if string match -q -- '-*' (commandline -ct)",
    '    __svc_flags "$svcpath"',
    '  else',
    '    __svc_children "$svcpath"',
    '  end',
    'end',
    "complete -c svc -f -a '(__svc_complete)'",
    '',
  ].join('\n');
}

/** The script for a shell, from the program's command tree as it is now. */
export function completionScript(program: Command, shell: Shell): string {
  const nodes: Node[] = [];
  walk(
    program,
    '',
    nodes,
    flagsOf(program.options).filter((flag) => flag !== '--version' && flag !== '-v'),
  );
  return { bash, zsh, fish }[shell](nodes);
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('Print a shell completion script for bash, zsh or fish')
    .argument('<shell>', SHELLS.join(', '))
    .addHelpText(
      'after',
      `
Examples:
  $ source <(svc completion bash)                             # in ~/.bashrc
  $ source <(svc completion zsh)                              # in ~/.zshrc, after compinit
  $ svc completion fish > ~/.config/fish/completions/svc.fish`,
    )
    .action((shell: string) => {
      if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`completion knows ${SHELLS.join(', ')}, not ${JSON.stringify(shell)}`);
      process.stdout.write(completionScript(program, shell as Shell));
    });
}
