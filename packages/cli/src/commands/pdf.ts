import type { Command } from 'commander';
import { Option } from 'commander';
import { pdfContract, type DocumentFormat } from '@svc/schemas';
import { withContext, type CliContext } from '../context.ts';
import { rangeText, requestFrom } from '../contract-flags.ts';
import { UsageError } from '../failure.ts';
import { jsonText } from '../terminal-safe.ts';

interface PdfExtractFlags {
  startPage?: string;
  maxPages?: string;
  maxChars?: string;
  text?: boolean;
  jsonl?: boolean;
}

const numberOrAbsent = (value: string | number | undefined) => (value === undefined ? undefined : Number(value));

/** The page and character bounds, checked with the upload route's own query schema (documents share its bounds). */
function boundsOf(flags: PdfExtractFlags) {
  const query = requestFrom(pdfContract.extractUpload, 'query', { start_page: flags.startPage, max_pages: flags.maxPages, max_chars: flags.maxChars });
  return { startPage: numberOrAbsent(query.start_page), maxPages: numberOrAbsent(query.max_pages), maxChars: numberOrAbsent(query.max_chars) };
}

/** `most pages, 1..100 (default 32)`: the bound's help, from the contract. */
const boundHelp = (what: string, field: 'max_pages' | 'max_chars') =>
  `most ${what}, ${rangeText(pdfContract.extractUpload, 'query', field).replace(', default ', ' (default ')})`;

/**
 * `--text` (the default) prints each page's text as it arrives, pages separated by a form feed
 * like pdftotext; `--jsonl` prints one JSON object per page, then the summary; `--json` waits
 * for the whole answer and prints it as one document.
 */
async function extractPdf(cli: CliContext, file: string, flags: PdfExtractFlags): Promise<void> {
  if (flags.text && flags.jsonl) throw new UsageError('choose one of --text and --jsonl');
  const bounds = boundsOf(flags);
  const client = cli.client();
  if (cli.output.json && !flags.jsonl && !flags.text) {
    const extraction = await client.pdf.extractFile(file, bounds);
    cli.output.result(extraction, () => '');
    return;
  }
  const pages = client.pdf.streamPages(file, bounds);
  let first = true;
  for await (const page of pages) {
    if (flags.jsonl) cli.output.stdout.write(`${jsonText({ type: 'page', ...page })}\n`);
    else {
      // The form feed between pages is svc's own separator, written as it is.
      cli.output.stdout.write(first ? '' : '\f');
      cli.output.text(`${page.text}\n`);
      first = false;
    }
  }
  const summary = pages.summary;
  if (!summary) return;
  if (flags.jsonl) cli.output.stdout.write(`${jsonText({ type: 'summary', ...summary })}\n`);
  const truncation = summary.truncated ? `, truncated by ${summary.truncated_reason}` : '';
  cli.output.notice(`${summary.pages_returned} of ${summary.page_count} pages, ${summary.char_count} characters${truncation} (${summary.engine})`);
  for (const warning of summary.warnings) cli.output.notice(`warning: ${warning.page_number ? `page ${warning.page_number}: ` : ''}${warning.message}`);
}

const formats = ['html', 'markdown', 'text', 'docx', 'pdf'] as const;

export function registerPdfCommands(program: Command): void {
  const pdf = program.command('pdf').description('Extract text from PDFs, page by page');
  pdf
    .command('extract')
    .description('Extract page-aligned text from a PDF file, printing pages as they arrive')
    .argument('<file>', 'the PDF file')
    .option('--start-page <n>', `first page, one-based (${rangeText(pdfContract.extractUpload, 'query', 'start_page')})`)
    .option('--max-pages <n>', boundHelp('pages', 'max_pages'))
    .option('--max-chars <n>', boundHelp('characters', 'max_chars'))
    .option('--text', 'print page text, pages separated by form feeds (the default)')
    .option('--jsonl', 'print one JSON object per page, then a summary line')
    .addHelpText('after', '\nWith the global --json, the whole extraction is printed as one JSON document.')
    .action(withContext(async (cli, file: string, flags: PdfExtractFlags) => extractPdf(cli, file, flags)));

  const doc = program.command('doc').alias('document').description('Extract text from documents (HTML, Markdown, text, DOCX, PDF) by section');
  doc
    .command('extract')
    .description('Extract section-aligned text from a document file')
    .argument('<file>', 'the document file')
    .addOption(new Option('--format <format>', 'the document format (detected when absent)').choices(formats))
    .option('--max-chars <n>', boundHelp('characters', 'max_chars'))
    .option('--start-page <n>', 'PDF only: first page')
    .option('--max-pages <n>', 'PDF only: most pages')
    .action(
      withContext(async (cli, file: string, flags: PdfExtractFlags & { format?: DocumentFormat }) => {
        const extraction = await cli.client().documents.extractFile(file, { format: flags.format, ...boundsOf(flags) });
        cli.output.result(extraction, (document) =>
          document.sections
            .map((section) => {
              const heading =
                section.heading !== null
                  ? `${'#'.repeat(Math.max(1, section.level))} ${section.heading}\n\n`
                  : section.page_number !== null
                    ? `[page ${section.page_number}]\n\n`
                    : '';
              return `${heading}${section.text}`;
            })
            .join('\n\n'),
        );
        if (!cli.output.json && extraction.truncated)
          cli.output.notice(`truncated by ${extraction.truncated_reason}: ${extraction.sections_returned} of ${extraction.section_count} sections`);
      }),
    );
}
