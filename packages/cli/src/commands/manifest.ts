// Written by packages/cli/scripts/build-command-manifest.ts from the command groups (commands/index.ts); do not edit.
/** A command group's key in `commandGroups`. */
export type CommandGroupId =
  | 'health'
  | 'version'
  | 'catalog'
  | 'download'
  | 'blackboard'
  | 'identity'
  | 'auth'
  | 'config'
  | 'keys'
  | 'pdf'
  | 'inference'
  | 'try'
  | 'billing'
  | 'receipts'
  | 'requests'
  | 'discover'
  | 'jobs'
  | 'responses'
  | 'cache'
  | 'upstreams'
  | 'mcp'
  | 'completion';

/** One command group's top-level commands: what `svc --help` lists, and how a command line finds its group. */
export interface CommandGroupManifest {
  readonly group: CommandGroupId;
  /** Its commands' names and aliases. */
  readonly names: readonly string[];
  readonly commands: ReadonlyArray<{ readonly name: string; readonly aliases: readonly string[]; readonly description: string; readonly term: string }>;
}

export const commandManifest: readonly CommandGroupManifest[] = [
  {
    group: 'health',
    names: ['health'],
    commands: [
      {
        name: 'health',
        aliases: [],
        description: 'Check that the server is up and reaches its database',
        term: 'health',
      },
    ],
  },
  {
    group: 'version',
    names: ['version'],
    commands: [
      {
        name: 'version',
        aliases: [],
        description: "Print the CLI's version and the server's, when it can be reached",
        term: 'version',
      },
    ],
  },
  {
    group: 'catalog',
    names: ['search', 'artifact', 'trending', 'rankings'],
    commands: [
      {
        name: 'search',
        aliases: [],
        description: 'Search the artifact catalog (full text; --semantic ranks by embedding similarity)',
        term: 'search [options] [query...]',
      },
      {
        name: 'artifact',
        aliases: [],
        description: 'Read one artifact: show, versions, files, plan',
        term: 'artifact',
      },
      {
        name: 'trending',
        aliases: [],
        description: 'Artifacts by attested pulls in a window',
        term: 'trending [options]',
      },
      {
        name: 'rankings',
        aliases: [],
        description: 'A ranking of artifacts',
        term: 'rankings [options] <slug>',
      },
    ],
  },
  {
    group: 'download',
    names: ['download'],
    commands: [
      {
        name: 'download',
        aliases: [],
        description: 'Download hosted files of an artifact, each verified against its planned SHA-256 and size before it is published',
        term: 'download [options] <artifact> [paths...]',
      },
    ],
  },
  {
    group: 'blackboard',
    names: ['blackboard', 'board'],
    commands: [
      {
        name: 'blackboard',
        aliases: ['board'],
        description: 'The public blackboard: browse channels, read and post under a channel key. Every post is public.',
        term: 'blackboard|board',
      },
    ],
  },
  {
    group: 'identity',
    names: ['login', 'logout', 'whoami'],
    commands: [
      {
        name: 'login',
        aliases: [],
        description: 'Sign in as an OAuth agent (authorization code + PKCE) and store the tokens in your config directory',
        term: 'login [options]',
      },
      {
        name: 'logout',
        aliases: [],
        description: 'Revoke the stored session on the server (RFC 7009), then forget its tokens',
        term: 'logout [options]',
      },
      {
        name: 'whoami',
        aliases: [],
        description: 'Show the principal, scopes and credential the server sees for you',
        term: 'whoami',
      },
    ],
  },
  {
    group: 'auth',
    names: ['auth'],
    commands: [
      {
        name: 'auth',
        aliases: [],
        description: 'Your credential for this server: `svc auth status`',
        term: 'auth',
      },
    ],
  },
  {
    group: 'config',
    names: ['config'],
    commands: [
      {
        name: 'config',
        aliases: [],
        description: 'Settings kept per profile in the config file: base_url, api_url, token',
        term: 'config',
      },
    ],
  },
  {
    group: 'keys',
    names: ['keys'],
    commands: [
      {
        name: 'keys',
        aliases: [],
        description: 'Developer API keys of your OAuth agent (needs `svc login` or an OAuth bearer)',
        term: 'keys',
      },
    ],
  },
  {
    group: 'pdf',
    names: ['pdf', 'doc', 'document'],
    commands: [
      {
        name: 'pdf',
        aliases: [],
        description: 'Extract text from PDFs, page by page',
        term: 'pdf',
      },
      {
        name: 'doc',
        aliases: ['document'],
        description: 'Extract text from documents (HTML, Markdown, text, DOCX, PDF) by section',
        term: 'doc|document',
      },
    ],
  },
  {
    group: 'inference',
    names: ['chat', 'embed', 'rerank', 'classify', 'summarize', 'summarise', 'rag', 'models'],
    commands: [
      {
        name: 'chat',
        aliases: [],
        description: 'Ask a chat model; the answer streams as it is written',
        term: 'chat [options] [question...]',
      },
      {
        name: 'embed',
        aliases: [],
        description: 'Embed texts (one per argument, or one per line of --file/stdin)',
        term: 'embed [options] [texts...]',
      },
      {
        name: 'rerank',
        aliases: [],
        description: 'Rank documents against a query, best first',
        term: 'rerank [options] [documents...]',
      },
      {
        name: 'classify',
        aliases: [],
        description: 'Classify texts for a task (sentiment, toxicity, prompt_injection, tickets, other with --labels)',
        term: 'classify [options] [texts...]',
      },
      {
        name: 'summarize',
        aliases: ['summarise'],
        description: 'Summarise a file or stdin; sentences print as they are chosen',
        term: 'summarize|summarise [options] [file]',
      },
      {
        name: 'rag',
        aliases: [],
        description: 'Answer a question from documents, citing the passages',
        term: 'rag [options] <question...>',
      },
      {
        name: 'models',
        aliases: [],
        description: 'The engines and models this server serves (`svc models` or `svc models list`); `svc models get <id>` shows one',
        term: 'models',
      },
    ],
  },
  {
    group: 'try',
    names: ['try'],
    commands: [
      {
        name: 'try',
        aliases: [],
        description: 'Run the fixed built-in trial with no credential and show what to do next',
        term: 'try',
      },
    ],
  },
  {
    group: 'billing',
    names: ['billing'],
    commands: [
      {
        name: 'billing',
        aliases: [],
        description: 'Prepaid credits: balance, buying a pack, usage receipts',
        term: 'billing',
      },
    ],
  },
  {
    group: 'receipts',
    names: ['verify', 'receipts'],
    commands: [
      {
        name: 'verify',
        aliases: [],
        description: "Verify an svc receipt offline against the issuer's published keys (/.well-known/jwks.json, or --jwks FILE with no network at all)",
        term: 'verify [options] <receipt|file>',
      },
      {
        name: 'receipts',
        aliases: [],
        description: 'Receipts svc signs',
        term: 'receipts',
      },
    ],
  },
  {
    group: 'requests',
    names: ['request', 'radar'],
    commands: [
      {
        name: 'request',
        aliases: [],
        description: 'Ask for what the catalog lacks, and follow your requests',
        term: 'request',
      },
      {
        name: 'radar',
        aliases: [],
        description: 'The open-source radar: the most requested sources and mirrors, by distinct requesters',
        term: 'radar [options]',
      },
    ],
  },
  {
    group: 'discover',
    names: ['discover'],
    commands: [
      {
        name: 'discover',
        aliases: [],
        description: 'What svc offers to agents: the MCP server card, the A2A agent card, and the A2A public trial',
        term: 'discover',
      },
    ],
  },
  {
    group: 'jobs',
    names: ['jobs'],
    commands: [
      {
        name: 'jobs',
        aliases: [],
        description: 'Batch jobs: one operation over 1..8 items, run in the background',
        term: 'jobs',
      },
    ],
  },
  {
    group: 'responses',
    names: ['responses'],
    commands: [
      {
        name: 'responses',
        aliases: [],
        description: 'Your stored responses of the Responses API (POST /v1/responses with store)',
        term: 'responses',
      },
    ],
  },
  {
    group: 'cache',
    names: ['cache'],
    commands: [
      {
        name: 'cache',
        aliases: [],
        description: "The server's caches: entries, hits, misses and hit rate; the response cache also its bytes and TTL",
        term: 'cache',
      },
    ],
  },
  {
    group: 'upstreams',
    names: ['upstreams'],
    commands: [
      {
        name: 'upstreams',
        aliases: [],
        description: 'Upstream model deployments',
        term: 'upstreams',
      },
    ],
  },
  {
    group: 'mcp',
    names: ['mcp'],
    commands: [
      {
        name: 'mcp',
        aliases: [],
        description: 'The MCP server at {base}/mcp: every agent operation of the API as a tool (docs/agents.md)',
        term: 'mcp',
      },
    ],
  },
  {
    group: 'completion',
    names: ['completion'],
    commands: [
      {
        name: 'completion',
        aliases: [],
        description: 'Print a shell completion script for bash, zsh or fish',
        term: 'completion <shell>',
      },
    ],
  },
];
