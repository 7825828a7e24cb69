import { Parser } from 'htmlparser2';
import type { DocumentFormat } from '@svc/schemas';
import { normaliseText } from './worker/normalise-text.ts';

/** A heading and the text under it, before limits are applied. */
export interface RawSection {
  heading: string | null;
  level: number;
  text: string;
}

export interface SectionedDocument {
  sections: RawSection[];
  title?: string;
  author?: string;
  language?: string;
}

const BLOCK_TAGS = new Set(['p', 'div', 'section', 'article', 'header', 'footer', 'main', 'aside', 'nav', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'table', 'tr', 'blockquote', 'pre', 'figure', 'figcaption', 'hr', 'address', 'details', 'summary', 'form', 'fieldset']);
const SKIPPED_TAGS = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object', 'canvas']);
const HEADING = /^h([1-6])$/;

/** HTML into sections at h1-h6; scripts, styles and the head (but its title) are skipped. */
export function sectionHtml(html: string): SectionedDocument {
  const sections: RawSection[] = [];
  let current: RawSection = { heading: null, level: 0, text: '' };
  let headingText: string | undefined;
  let headingLevel = 0;
  let skipDepth = 0;
  let inTitle = false;
  let title = '';
  let author: string | undefined;
  let language: string | undefined;
  let preDepth = 0;
  const parser = new Parser(
    {
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
          if (current.heading !== null || current.text.trim() !== '') sections.push(current);
          headingText = '';
          headingLevel = Number(heading[1]);
          return;
        }
        if (name === 'pre') preDepth += 1;
        if (name === 'br') current.text += '\n';
        else if (BLOCK_TAGS.has(name)) current.text += '\n\n';
        else if (name === 'td' || name === 'th') current.text += ' ';
      },
      ontext(text) {
        if (inTitle) title += text;
        if (skipDepth > 0) return;
        if (headingText !== undefined) headingText += text;
        else current.text += preDepth > 0 ? text : text.replace(/\s+/g, ' ');
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        if (SKIPPED_TAGS.has(name)) {
          skipDepth = Math.max(0, skipDepth - 1);
          return;
        }
        if (skipDepth > 0) return;
        if (HEADING.test(name) && headingText !== undefined) {
          current = { heading: normaliseText(headingText.replace(/\s+/g, ' ')), level: headingLevel, text: '' };
          headingText = undefined;
          return;
        }
        if (name === 'pre') preDepth = Math.max(0, preDepth - 1);
        if (BLOCK_TAGS.has(name)) current.text += '\n\n';
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  if (headingText !== undefined) current = { heading: normaliseText(headingText), level: headingLevel, text: '' };
  sections.push(current);
  return { sections: sections.filter((section) => section.heading !== null || section.text.trim() !== ''), title: normaliseText(title) || undefined, author, language };
}

/** Markdown into sections at ATX (`## x`) and setext (`x\n===`) headings, outside code fences. */
export function sectionMarkdown(markdown: string): SectionedDocument {
  const sections: RawSection[] = [];
  let current: RawSection = { heading: null, level: 0, text: '' };
  let fence: string | undefined;
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const startSection = (heading: string, level: number) => {
    if (current.heading !== null || current.text.trim() !== '') sections.push(current);
    current = { heading: heading.trim(), level, text: '' };
  };
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const fenceMatch = /^\s{0,3}(```|~~~)/.exec(line);
    if (fenceMatch) {
      if (fence === undefined) fence = fenceMatch[1];
      else if (fenceMatch[1] === fence) fence = undefined;
      current.text += `${line}\n`;
      continue;
    }
    if (fence === undefined) {
      const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
      if (atx) {
        startSection(atx[2]!, atx[1]!.length);
        continue;
      }
      const next = lines[index + 1];
      if (line.trim() !== '' && next !== undefined && /^\s{0,3}(=+|-+)\s*$/.test(next) && !/^\s{0,3}[-*+]\s/.test(line)) {
        startSection(line, next.trim().startsWith('=') ? 1 : 2);
        index += 1;
        continue;
      }
    }
    current.text += `${line}\n`;
  }
  sections.push(current);
  // Inline syntax that only hides words: images and links keep their text, emphasis marks go.
  const plain = (text: string) =>
    text
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
      .replace(/(\*\*|__)(?=\S)(.+?)(?<=\S)\1/g, '$2');
  const kept = sections.filter((section) => section.heading !== null || section.text.trim() !== '').map((section) => ({ ...section, heading: section.heading === null ? null : plain(section.heading), text: plain(section.text) }));
  const title = kept.find((section) => section.level === 1)?.heading ?? undefined;
  return { sections: kept, ...(title ? { title } : {}) };
}

export function sectionPlainText(text: string): SectionedDocument {
  return { sections: [{ heading: null, level: 0, text }] };
}

/** Decides the format from what was said, the file name, and the first bytes. */
export function detectFormat(bytes: Buffer, declared: DocumentFormat | undefined, filename: string | undefined): DocumentFormat | undefined {
  if (declared) return declared;
  if (bytes.subarray(0, 1024).includes('%PDF-')) return 'pdf';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04) return filename && !/\.docx$/i.test(filename) ? undefined : 'docx';
  const extension = filename?.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1];
  if (extension === 'md' || extension === 'markdown') return 'markdown';
  if (extension === 'html' || extension === 'htm' || extension === 'xhtml') return 'html';
  if (extension === 'txt' || extension === 'text') return 'text';
  if (bytes.includes(0)) return undefined;
  const head = bytes.subarray(0, 4096).toString('utf8').trimStart().toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html') || /<(body|p|div|h[1-6])[\s>]/.test(head)) return 'html';
  if (/^(#{1,6}\s|```)/m.test(head) || /^.+\n(=+|-+)\s*$/m.test(head)) return 'markdown';
  return 'text';
}
