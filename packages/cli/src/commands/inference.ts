import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { ClassifyTask, inferenceContract, type SseMessage, type SummarySentence, type RagPassage } from '@svc/schemas';
import { withContext, type CliContext } from '../context.ts';
import { rangeText, requestFrom } from '../contract-flags.ts';
import { UsageError } from '../failure.ts';
import { textFrom } from '../input.ts';
import { table } from '../output.ts';

interface ChatFlags {
  model?: string;
  system?: string;
  file?: string;
  maxTokens?: string;
  temperature?: string;
  stream: boolean;
}

/**
 * `svc chat`: prints the answer's tokens as they arrive (a stream), or with `--json` the whole
 * completion as one JSON document. The engine that answered goes to stderr, so a person sees
 * when the built-in model answered extractively.
 */
async function chat(cli: CliContext, words: string[], flags: ChatFlags): Promise<void> {
  const question = await textFrom(words, flags.file, 'the question');
  const request = requestFrom(
    inferenceContract.chat,
    'body',
    {
      messages: [...(flags.system ? [{ role: 'system' as const, content: flags.system }] : []), { role: 'user', content: question }],
      model: flags.model || undefined,
      max_tokens: flags.maxTokens,
      temperature: flags.temperature,
    },
    { 'messages.0.content': flags.system ? '--system' : 'the question', 'messages.1.content': 'the question' },
  );
  const client = cli.client();
  if (cli.output.json || !flags.stream) {
    const completion = await client.chat.completions.create({ ...request, stream: false });
    cli.output.result(completion, (answer) => answer.choices[0]?.message.content ?? '');
    if (!cli.output.json && completion.svc?.note) cli.output.notice(`(${completion.model}: ${completion.svc.note})`);
    return;
  }
  const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
  let model = '';
  for await (const chunk of stream) {
    model = chunk.model;
    const text = chunk.choices[0]?.delta.content;
    if (text) cli.output.text(text);
  }
  cli.output.stdout.write('\n');
  if (cli.output.interactive) cli.output.notice(`(${model})`);
}

async function linesFrom(words: string[], file: string | undefined, what: string): Promise<string[]> {
  if (words.length > 0) return words;
  const text = await textFrom([], file, what);
  return text.split(/\r?\n/).filter((line) => line.trim() !== '');
}

export function registerInferenceCommands(program: Command): void {
  program
    .command('chat')
    .description('Ask a chat model; the answer streams as it is written')
    .argument('[question...]', 'the question (or use --file, or stdin)')
    .option('--model <id>', "a chat model from `svc models` (default: the server's default)")
    .option('--system <text>', 'a system message')
    .option('--file <path>', "read the question from a file ('-' for stdin)")
    .option('--max-tokens <n>', `most tokens in the answer, ${rangeText(inferenceContract.chat, 'body', 'max_tokens')}`)
    .option('--temperature <t>', `sampling temperature, ${rangeText(inferenceContract.chat, 'body', 'temperature')}`)
    .option('--no-stream', 'wait for the whole answer')
    .action(withContext(chat));

  program
    .command('embed')
    .description('Embed texts (one per argument, or one per line of --file/stdin)')
    .argument('[texts...]', 'the texts')
    .option('--file <path>', "read texts from a file, one per line ('-' for stdin)")
    .option('--model <id>', 'an embeddings model')
    .option('--dimensions <n>', `fewer dimensions, where the model allows (${rangeText(inferenceContract.embeddings, 'body', 'dimensions')})`)
    .action(
      withContext(async (cli, words: string[], flags: { file?: string; model?: string; dimensions?: string }) => {
        const input = await linesFrom(words, flags.file, 'the texts');
        const body = requestFrom(inferenceContract.embeddings, 'body', { input, model: flags.model, dimensions: flags.dimensions }, { input: 'the texts' });
        const answer = await cli.client().inference.embeddings({ body });
        cli.output.result(answer, (embeddings) =>
          embeddings.data
            .map((item) => {
              const vector = item.embedding as number[];
              return `${item.index}\t${vector.length} dims\t[${vector
                .slice(0, 4)
                .map((value) => value.toFixed(4))
                .join(', ')}, ...]\t${input[item.index]!.slice(0, 60)}`;
            })
            .join('\n'),
        );
      }),
    );

  program
    .command('rerank')
    .description('Rank documents against a query, best first')
    .requiredOption('--query <text>', 'the query')
    .argument('[documents...]', 'the documents (or one per line of --file/stdin)')
    .option('--file <path>', "read documents from a file, one per line ('-' for stdin)")
    .option('--top-n <n>', `how many results, ${rangeText(inferenceContract.rerank, 'body', 'top_n')}`)
    .option('--model <id>', 'a rerank model')
    .action(
      withContext(async (cli, words: string[], flags: { query: string; file?: string; topN?: string; model?: string }) => {
        const documents = await linesFrom(words, flags.file, 'the documents');
        const body = requestFrom(
          inferenceContract.rerank,
          'body',
          { query: flags.query, documents, top_n: flags.topN, return_documents: true, model: flags.model },
          { documents: 'the documents' },
        );
        const answer = await cli.client().inference.rerank({ body });
        cli.output.result(answer, (ranked) =>
          table(ranked.results.map((result) => [result.relevance_score.toFixed(4), `#${result.index}`, (result.document?.text ?? '').slice(0, 80)])),
        );
      }),
    );

  program
    .command('classify')
    .description('Classify texts for a task (sentiment, toxicity, prompt_injection, tickets, other with --labels)')
    .argument('[texts...]', 'the texts (or one per line of --file/stdin)')
    .addOption(new Option('--task <task>', 'the task').choices(ClassifyTask.options.filter((task) => task !== 'nli')).default('sentiment'))
    .option('--labels <labels>', 'explicit labels, comma-separated (needed for --task other)')
    .option('--file <path>', "read texts from a file, one per line ('-' for stdin)")
    .option('--multi-label', 'score each label on its own')
    .option('--model <id>', 'a classification model')
    .action(
      withContext(async (cli, words: string[], flags: { task: 'sentiment'; labels?: string; file?: string; multiLabel?: boolean; model?: string }) => {
        const inputs = await linesFrom(words, flags.file, 'the texts');
        const labels = flags.labels
          ?.split(',')
          .map((label) => label.trim())
          .filter(Boolean);
        const answer = await cli
          .client()
          .inference.classify({ body: { task: flags.task, inputs, labels, multi_label: Boolean(flags.multiLabel), model: flags.model } });
        cli.output.result(answer, (classified) =>
          table(classified.results.map((result) => [result.label, result.score.toFixed(3), result.confidence, inputs[result.index]!.slice(0, 70)])),
        );
      }),
    );

  program
    .command('summarize')
    .alias('summarise')
    .description('Summarise a file or stdin; sentences print as they are chosen')
    .argument('[file]', "the text file ('-' or nothing for stdin)")
    .option('--sentences <n>', `sentences in the summary, ${rangeText(inferenceContract.summarize, 'body', 'max_sentences')}`)
    .option('--model <id>', 'a summarisation model')
    .action(
      withContext(async (cli, file: string | undefined, flags: { sentences?: string; model?: string }) => {
        const text = await textFrom([], file ?? '-', 'the text');
        const body = requestFrom(
          inferenceContract.summarize,
          'body',
          { text, max_sentences: flags.sentences, model: flags.model },
          { text: 'the text', max_sentences: '--sentences' },
        );
        const client = cli.client();
        if (cli.output.json) {
          cli.output.result(await client.inference.summarize({ body: { ...body, stream: false } }), () => '');
          return;
        }
        const events = (await client.inference.summarize({ body: { ...body, stream: true } })) as AsyncIterable<SseMessage<unknown>>;
        for await (const event of events) {
          if (event.event === 'sentence-selected') cli.output.text(`${(event.data as SummarySentence).text}\n`);
          if (event.event === 'error') throw new UsageError(`the summary failed: ${(event.data as { message?: string }).message ?? 'unknown error'}`);
        }
      }),
    );

  program
    .command('rag')
    .description('Answer a question from documents, citing the passages')
    .argument('<question...>', 'the question')
    .option('--doc <file>', 'a document file (repeat --doc for several)', (file: string, files: string[]) => [...files, file], [] as string[])
    .option('--top-k <n>', `passages to retrieve and cite, ${rangeText(inferenceContract.rag, 'body', 'top_k')}`)
    .option('--model <id>', 'a RAG model')
    .action(
      withContext(async (cli, words: string[], flags: { doc: string[]; topK?: string; model?: string }) => {
        if (flags.doc.length === 0) throw new UsageError('give at least one --doc FILE to answer from');
        const documents = await Promise.all(flags.doc.map(async (file) => ({ id: file, text: await readFile(file, 'utf8') })));
        const body = requestFrom(
          inferenceContract.rag,
          'body',
          { question: words.join(' '), documents, top_k: flags.topK, model: flags.model, stream: false },
          { question: 'the question', documents: '--doc' },
        );
        const answer = await cli.client().inference.rag({ body });
        cli.output.result(answer, (rag) => {
          if (!('citations' in rag)) return '';
          const sources = rag.citations.map(
            (citation: RagPassage & { marker: number }) =>
              `[${citation.marker}] ${citation.document_id ?? `document ${citation.document_index}`} @${citation.start}-${citation.end}`,
          );
          return [rag.answer, ...(sources.length ? ['', ...sources] : [])].join('\n');
        });
      }),
    );

  const listModels = withContext(async (cli) => {
    const models = await cli.client().models.list();
    cli.output.result(models, (list) =>
      table([
        ['MODEL', 'ENGINE', 'METHOD', 'TASKS', 'DEFAULT FOR'],
        ...list.data.map((model) => [model.id, model.engine, model.method ?? '', model.tasks.join(','), (model.default_for ?? []).join(',')]),
      ]),
    );
  });
  const models = program
    .command('models')
    .description('The engines and models this server serves (`svc models` or `svc models list`); `svc models get <id>` shows one')
    .action(listModels);
  // `list` as gh and the openai CLI spell it; `svc models` alone lists too.
  models.command('list').description('The engines and models this server serves').action(listModels);
  models
    .command('get <id>')
    .description('One model: what it is, who serves it and what it is for (404 for an id the server does not serve)')
    .action(
      withContext(async (cli, id: string) => {
        const model = await cli.client().models.get({ params: { model: id } });
        cli.output.result(model, (one) =>
          table([
            ['id', one.id],
            ['label', one.label],
            ['engine', `${one.engine} (owned by ${one.owned_by})`],
            ['method', one.method ?? ''],
            ['tasks', one.tasks.join(',')],
            ['default for', (one.default_for ?? []).join(',')],
            ...(one.fallbacks?.length ? [['fallbacks', one.fallbacks.join(',')]] : []),
            ...(one.dimensions !== undefined ? [['dimensions', String(one.dimensions)]] : []),
            ['description', one.description],
          ]),
        );
      }),
    );
}

/** `svc try`: the zero-credential proof, as a person reads it. */
export function registerTryCommand(program: Command): void {
  program
    .command('try')
    .description('Run the fixed built-in trial with no credential and show what to do next')
    .action(
      withContext(async (cli) => {
        const trial = await cli.client().discovery.try();
        cli.output.result(trial, (data) =>
          [
            `${data.operation.description}`,
            `query: ${data.operation.request.query}`,
            table(data.operation.response.results.map((result) => [result.relevance_score.toFixed(3), result.document?.text ?? `#${result.index}`])),
            `(${data.operation.response.model}, ${data.timings_ms.engine} ms)`,
            '',
            `credential: ${data.credential.how}`,
            'next:',
            ...data.next.map((call) => `  ${call.method} ${call.url}  ${call.why}`),
          ].join('\n'),
        );
      }),
    );
}
