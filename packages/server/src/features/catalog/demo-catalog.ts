import { createHash } from 'node:crypto';
import type { ImportRecordInput } from './import-records.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const at = (day: number) => new Date(Date.UTC(2026, 9, day, 12)).toISOString();

/** Deterministic pseudo-random lines, so the demo files are identical on every install. */
function lexicon(): string {
  const positive = ['good', 'great', 'excellent', 'helpful', 'fast', 'clear', 'reliable', 'love', 'friendly', 'resolved'];
  const negative = ['bad', 'slow', 'broken', 'confusing', 'rude', 'refund', 'hate', 'crash', 'late', 'unresolved'];
  return (
    [
      'term\tpolarity\tweight',
      ...positive.map((term, index) => `${term}\tpositive\t${(0.5 + index / 20).toFixed(2)}`),
      ...negative.map((term, index) => `${term}\tnegative\t${(0.5 + index / 20).toFixed(2)}`),
    ].join('\n') + '\n'
  );
}

function injectionRules(): string {
  const rules = [
    ['ignore-previous', 'ignore (all )?(previous|prior) instructions', 'high'],
    ['reveal-system', 'reveal (your )?(system|hidden) prompt', 'high'],
    ['role-override', 'you are now (dan|developer mode)', 'medium'],
    ['exfiltrate', 'send (the )?(api key|password|secret)', 'high'],
    ['tool-hijack', 'call the .* tool with', 'medium'],
  ];
  return rules.map(([id, pattern, severity]) => JSON.stringify({ id, pattern, severity })).join('\n') + '\n';
}

function tickets(): string {
  const rows = [
    ['1001', 'billing', 'I was charged twice for my subscription'],
    ['1002', 'login', 'Password reset email never arrives'],
    ['1003', 'bug', 'The export button crashes the app'],
    ['1004', 'billing', 'Please send an invoice with our VAT number'],
    ['1005', 'feature', 'Could you add dark mode?'],
    ['1006', 'login', 'Two-factor codes are rejected'],
  ];
  return ['id,category,text', ...rows.map((row) => row.map((cell) => (cell.includes(',') ? `"${cell}"` : cell)).join(','))].join('\n') + '\n';
}

/**
 * A small catalog loaded on the first start of an empty embedded database, so a new user can
 * search and download at once. Hosted files carry their bytes inline; external artifacts are
 * metadata only.
 */
export function demoCatalog(): ImportRecordInput[] {
  const files = {
    embeddingsReadme:
      '# svc hashed n-gram embeddings\n\nThe built-in embedding model of svc: no weights, 512 dimensions.\nWord unigrams, bigrams and character trigrams are hashed into signed buckets and L2-normalised.\n',
    embeddingsConfig:
      JSON.stringify(
        { model: 'svc-hashed-ngrams-512', dimensions: 512, features: { words: 1, bigrams: 0.7, trigrams: 0.35 }, hash: 'fnv1a-32', normalise: 'l2' },
        null,
        2,
      ) + '\n',
    lexicon: lexicon(),
    lexiconCard:
      JSON.stringify({ name: 'tiny-sentiment-lexicon', task: 'sentiment', languages: ['en'], method: 'lexicon lookup with weights' }, null, 2) + '\n',
    lexiconReadme: '# Tiny sentiment lexicon\n\nTwenty weighted English terms for positive and negative sentiment. A baseline, not a neural model.\n',
    rules: injectionRules(),
    rulesReadme: '# Prompt-injection rules\n\nRegular expressions for common prompt-injection phrasings, with a severity each. Screening is best effort.\n',
    tickets: tickets(),
    ticketsReadme: '# Support tickets sample\n\nSix synthetic customer-support tickets labelled billing, login, bug or feature.\n',
  };
  return [
    {
      kind: 'artifact',
      id: 'svc-hashed-ngrams-512',
      name: 'svc hashed n-gram embeddings',
      type: 'embedding',
      summary: 'Weight-free text embeddings: hashed word and character n-grams, 512 dimensions.',
      description:
        'The built-in embedding engine of svc as a downloadable description: configuration and documentation. Cosine similarity of these vectors measures shared words and word pieces, useful for retrieval and deduplication without model weights.',
      license: 'apache-2.0',
      hosting: 'hosted',
      source: 'upload',
      repo: null,
      worksWith: ['svc'],
      tags: ['embeddings', 'retrieval', 'no-weights', 'builtin'],
      reviewStatus: 'verified',
      createdAt: at(1),
    },
    { kind: 'version', artifactId: 'svc-hashed-ngrams-512', revision: 'v1', notes: 'First release.', createdAt: at(1) },
    {
      kind: 'file',
      artifactId: 'svc-hashed-ngrams-512',
      revision: 'v1',
      path: 'README.md',
      mediaType: 'text/markdown',
      packs: ['default', 'full', 'docs'],
      content: files.embeddingsReadme,
    },
    {
      kind: 'file',
      artifactId: 'svc-hashed-ngrams-512',
      revision: 'v1',
      path: 'config.json',
      mediaType: 'application/json',
      packs: ['default', 'full', 'config'],
      content: files.embeddingsConfig,
    },
    {
      kind: 'trust-bundle',
      id: 'tb-svc-hashed-ngrams-512-v1',
      artifactId: 'svc-hashed-ngrams-512',
      revision: 'v1',
      bundleKind: 'provenance',
      issuer: 'svc demo catalog',
      statement: { builder: 'svc', reproducible: true },
      subjects: [
        { path: 'README.md', sha256: sha256(files.embeddingsReadme) },
        { path: 'config.json', sha256: sha256(files.embeddingsConfig) },
      ],
      createdAt: at(1),
    },
    {
      kind: 'review',
      id: 'rv-ngrams-1',
      artifactId: 'svc-hashed-ngrams-512',
      author: 'demo-agent',
      rating: 4,
      title: 'Good enough for dedupe',
      body: 'Finds near-duplicate tickets well; not a semantic model.',
      createdAt: at(3),
    },

    {
      kind: 'artifact',
      id: 'tiny-sentiment-lexicon',
      name: 'Tiny sentiment lexicon',
      type: 'model',
      summary: 'A weighted English sentiment lexicon for quick positive/negative scoring.',
      description:
        'Twenty weighted terms for sentiment analysis of short support messages. Lexicon lookup, fast and transparent; a baseline to compare neural classifiers against.',
      license: 'mit',
      hosting: 'hosted',
      source: 'github',
      repo: 'svc-demo/tiny-sentiment-lexicon',
      worksWith: ['svc', 'onnxruntime'],
      tags: ['sentiment', 'classification', 'lexicon'],
      reviewStatus: 'community-reviewed',
      createdAt: at(2),
    },
    { kind: 'version', artifactId: 'tiny-sentiment-lexicon', revision: 'v1', notes: 'First release.', createdAt: at(2) },
    { kind: 'version', artifactId: 'tiny-sentiment-lexicon', revision: 'v2', notes: 'Weights rebalanced; model card added.', createdAt: at(5) },
    {
      kind: 'file',
      artifactId: 'tiny-sentiment-lexicon',
      revision: 'v1',
      path: 'lexicon.tsv',
      mediaType: 'text/tab-separated-values',
      packs: ['default', 'full', 'weights'],
      content: files.lexicon.replace(/0\.5/g, '0.4'),
    },
    {
      kind: 'file',
      artifactId: 'tiny-sentiment-lexicon',
      revision: 'v2',
      path: 'lexicon.tsv',
      mediaType: 'text/tab-separated-values',
      packs: ['default', 'full', 'weights'],
      content: files.lexicon,
    },
    {
      kind: 'file',
      artifactId: 'tiny-sentiment-lexicon',
      revision: 'v2',
      path: 'model-card.json',
      mediaType: 'application/json',
      packs: ['default', 'full', 'config'],
      content: files.lexiconCard,
    },
    {
      kind: 'file',
      artifactId: 'tiny-sentiment-lexicon',
      revision: 'v2',
      path: 'docs/README.md',
      mediaType: 'text/markdown',
      tools: ['svc'],
      packs: ['full', 'docs'],
      content: files.lexiconReadme,
    },
    {
      kind: 'review',
      id: 'rv-lexicon-1',
      artifactId: 'tiny-sentiment-lexicon',
      author: 'support-bot',
      rating: 5,
      title: 'Transparent',
      body: 'Easy to audit and fast.',
      createdAt: at(6),
    },
    {
      kind: 'review',
      id: 'rv-lexicon-2',
      artifactId: 'tiny-sentiment-lexicon',
      author: 'eval-agent',
      rating: 3,
      title: 'Misses sarcasm',
      body: 'Fine baseline, weak on negation.',
      createdAt: at(7),
    },

    {
      kind: 'artifact',
      id: 'prompt-injection-rules',
      name: 'Prompt-injection rules',
      type: 'tool',
      summary: 'Regular-expression rules that flag common prompt-injection phrasings.',
      description:
        'Patterns for guard and moderation pipelines: instruction override, system prompt extraction, secret exfiltration and tool hijacking, each with a severity.',
      license: 'cc-by-4.0',
      hosting: 'hosted',
      source: 'upload',
      repo: null,
      worksWith: ['svc'],
      tags: ['prompt-injection', 'guard', 'security', 'moderation'],
      reviewStatus: 'verified',
      createdAt: at(3),
    },
    { kind: 'version', artifactId: 'prompt-injection-rules', revision: '2026.10', notes: 'October rules.', createdAt: at(3) },
    {
      kind: 'file',
      artifactId: 'prompt-injection-rules',
      revision: '2026.10',
      path: 'rules.jsonl',
      mediaType: 'application/x-ndjson',
      packs: ['default', 'full'],
      content: files.rules,
    },
    {
      kind: 'file',
      artifactId: 'prompt-injection-rules',
      revision: '2026.10',
      path: 'README.md',
      mediaType: 'text/markdown',
      packs: ['full', 'docs'],
      content: files.rulesReadme,
    },
    {
      kind: 'trust-bundle',
      id: 'tb-prompt-injection-rules-2026.10',
      artifactId: 'prompt-injection-rules',
      revision: '2026.10',
      bundleKind: 'scan',
      issuer: 'svc demo catalog',
      statement: { scanner: 'manual review', findings: 0 },
      subjects: [{ path: 'rules.jsonl', sha256: sha256(files.rules) }],
      createdAt: at(3),
    },

    {
      kind: 'artifact',
      id: 'support-tickets-sample',
      name: 'Support tickets sample',
      type: 'dataset',
      summary: 'Six labelled customer-support tickets for trying classifiers and routing.',
      description: 'A tiny synthetic dataset of support tickets (billing, login, bug, feature) for ticket routing demos.',
      license: 'cc0-1.0',
      hosting: 'hosted',
      source: 'upload',
      repo: null,
      worksWith: ['svc', 'transformers'],
      tags: ['tickets', 'support', 'classification', 'dataset'],
      reviewStatus: 'unreviewed',
      createdAt: at(4),
    },
    { kind: 'version', artifactId: 'support-tickets-sample', revision: 'v1', notes: 'Six tickets.', createdAt: at(4) },
    {
      kind: 'file',
      artifactId: 'support-tickets-sample',
      revision: 'v1',
      path: 'tickets.csv',
      mediaType: 'text/csv',
      packs: ['default', 'full'],
      content: files.tickets,
    },
    {
      kind: 'file',
      artifactId: 'support-tickets-sample',
      revision: 'v1',
      path: 'README.md',
      mediaType: 'text/markdown',
      packs: ['full', 'docs'],
      content: files.ticketsReadme,
    },

    {
      kind: 'artifact',
      id: 'all-minilm-l6-v2',
      name: 'all-MiniLM-L6-v2',
      type: 'embedding',
      summary: 'Sentence embeddings (384 dimensions), a common neural baseline for semantic search.',
      description: 'Listed for discovery only: the weights stay on Hugging Face. Request a mirror to have them hosted here with verified downloads.',
      license: 'apache-2.0',
      hosting: 'external',
      source: 'huggingface',
      repo: 'sentence-transformers/all-MiniLM-L6-v2',
      homepage: 'https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2',
      worksWith: ['sentence-transformers', 'transformers', 'onnxruntime'],
      tags: ['embeddings', 'semantic-search', 'sentence-similarity'],
      reviewStatus: 'unreviewed',
      createdAt: at(5),
    },
    { kind: 'version', artifactId: 'all-minilm-l6-v2', revision: 'main', notes: 'Upstream main branch (not hosted).', createdAt: at(5) },
  ];
}
