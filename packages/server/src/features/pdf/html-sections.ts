import { pdfLimits } from '@svc/schemas';
import { readHtml, readHtmlInSlices, type HtmlHandler } from '../../bounded/html-events.ts';
import type { RawSection, SectionedDocument } from './document-sections.ts';

const BLOCK_TAGS = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'aside',
  'nav',
  'li',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'table',
  'tr',
  'blockquote',
  'pre',
  'figure',
  'figcaption',
  'hr',
  'address',
  'details',
  'summary',
  'form',
  'fieldset',
]);
const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object', 'canvas']);
const HEADING = /^h([1-6])$/;

/**
 * Collects sections at h1-h6 from HTML events; scripts, styles and the head (but its title) are
 * skipped. Only counters, no tree: the work per event is constant (see html-events.ts).
 */
function htmlSectioner(): { handler: HtmlHandler; finish(): SectionedDocument } {
  const sections: RawSection[] = [];
  // Past the sections an answer can hold, the rest are counted, not kept (16 MiB of <h1> is 4 million).
  let sectionCount = 0;
  const keep = (section: RawSection) => {
    sectionCount += 1;
    if (sections.length < pdfLimits.maxDocumentSections) sections.push(section);
  };
  let current: RawSection = { heading: null, level: 0, text: '' };
  let headingText: string | undefined;
  let headingLevel = 0;
  let skipDepth = 0;
  let inTitle = false;
  let title = '';
  let author: string | undefined;
  let language: string | undefined;
  let preDepth = 0;
  /*
   * What the section's text ends with. Spaces after a newline or a space, and newlines past two,
   * change nothing once normaliseText has run, so they are not kept: 16 MiB of `<div>` would
   * otherwise build 13 MB of newlines (a rope of millions of pieces for the collector to walk).
   */
  let tail: 'text' | 'space' | 'newline' | 'paragraph' = 'paragraph';
  const appendSpace = () => {
    if (tail !== 'text') return;
    current.text += ' ';
    tail = 'space';
  };
  const appendNewline = () => {
    if (tail === 'paragraph') return;
    current.text += '\n';
    tail = tail === 'newline' ? 'paragraph' : 'newline';
  };
  const appendParagraph = () => {
    if (tail === 'paragraph') return;
    current.text += '\n\n';
    tail = 'paragraph';
  };
  const appendText = (text: string) => {
    current.text += text;
    tail = 'text';
  };
  const handler: HtmlHandler = {
    onopentag(name, attributes) {
      if (name === 'html' && attributes.lang) language = attributes.lang;
      if (name === 'title') inTitle = true;
      if (name === 'meta' && attributes.name?.toLowerCase() === 'author' && attributes.content) author = attributes.content;
      if (SKIPPED_TAGS.has(name)) {
        skipDepth += 1;
        return;
      }
      if (skipDepth > 0) return;
      const heading = HEADING.exec(name);
      if (heading) {
        if (current.heading !== null || current.text.trim() !== '') keep(current);
        tail = 'paragraph';
        headingText = '';
        headingLevel = Number(heading[1]);
        return;
      }
      if (name === 'pre') preDepth += 1;
      if (name === 'br') appendNewline();
      else if (BLOCK_TAGS.has(name)) appendParagraph();
      else if (name === 'td' || name === 'th') appendSpace();
    },
    ontext(text) {
      if (inTitle) title += text;
      if (skipDepth > 0) return;
      // Collapsed a text event at a time: the same result once normalised, which squeezes the
      // double spaces two events may leave, and a 16 MiB heading is never collapsed in one go.
      if (headingText !== undefined) headingText += text.replace(/\s+/g, ' ');
      else if (preDepth > 0) appendText(text);
      else {
        const collapsed = text.replace(/\s+/g, ' ');
        if (collapsed === ' ') appendSpace();
        else if (collapsed !== '') appendText(collapsed);
      }
    },
    onclosetag(name) {
      if (name === 'title') inTitle = false;
      if (SKIPPED_TAGS.has(name)) {
        skipDepth = Math.max(0, skipDepth - 1);
        return;
      }
      if (skipDepth > 0) return;
      if (HEADING.test(name) && headingText !== undefined) {
        current = { heading: headingText, level: headingLevel, text: '' };
        headingText = undefined;
        return;
      }
      if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
      if (BLOCK_TAGS.has(name)) appendParagraph();
    },
  };
  const finish = (): SectionedDocument => {
    if (headingText !== undefined) current = { heading: headingText, level: headingLevel, text: '' };
    if (current.heading !== null || current.text.trim() !== '') keep(current);
    return { sections, sectionCount, title, author, language, headingsToNormalise: true };
  };
  return { handler, finish };
}

/** HTML into sections, in one go: linear, for documents already known to be small. */
export function sectionHtml(html: string): SectionedDocument {
  const sectioner = htmlSectioner();
  readHtml(html, sectioner.handler);
  return sectioner.finish();
}

/** HTML into sections, one slice per turn of the event loop: for caller documents up to 16 MiB. */
export async function sectionHtmlInSlices(html: string, signal?: AbortSignal): Promise<SectionedDocument> {
  const sectioner = htmlSectioner();
  await readHtmlInSlices(html, sectioner.handler, signal);
  return sectioner.finish();
}
