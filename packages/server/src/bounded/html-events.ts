import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { ChunkedStack } from './chunked-stack.ts';
import { runInSlices, runToEnd, type Steps } from './work-in-slices.ts';

/** What a reader of HTML hears: the events htmlparser2's Parser emits, with the same implied closes. */
export interface HtmlHandler {
  onopentag?(name: string, attributes: Readonly<Record<string, string>>): void;
  ontext?(text: string): void;
  onclosetag?(name: string): void;
}

/*
 * htmlparser2's Parser keeps its open elements with `unshift` and finds a closing tag's element
 * with `indexOf`, so unclosed or mismatched tags make it quadratic (1 MB of `<div>` took 21 s).
 * This layer drives the same Tokenizer (linear) and keeps the open elements as a stack plus a
 * count per name, so every event costs O(1) amortised: each element is pushed and popped once.
 * The tables below are the Parser's (htmlparser2 12), so ordinary documents give the same events.
 */
const formTags = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const pTag = new Set(['p']);
const headingTags = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const tableSectionTags = new Set(['thead', 'tbody']);
const ddtTags = new Set(['dd', 'dt']);
const rtpTags = new Set(['rt', 'rp']);
const openImpliesClose = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['a', new Set(['a'])],
  ['li', new Set(['li'])],
  ['p', pTag],
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((name) => [name, headingTags] as [string, Set<string>]),
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((name) => [name, formTags] as [string, Set<string>]),
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', ddtTags],
  ['dt', ddtTags],
  ...[
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((name) => [name, pTag] as [string, Set<string>]),
  ['rt', rtpTags],
  ['rp', rtpTags],
  ['tbody', tableSectionTags],
  ['tfoot', tableSectionTags],
]);
const voidElements = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const foreignElements = new Set(['math', 'svg']);
const integrationElements = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);
/** What a tag without attributes hands its handler: one frozen object for all of them. */
const NO_ATTRIBUTES: Readonly<Record<string, string>> = Object.freeze({});

/** A tag with a million attributes would otherwise build a million-key object nobody reads. */
const MAX_ATTRIBUTES = 64;
const MAX_INTERNED_NAMES = 1024;

/** The HTML event stream over one document: write it whole or in slices, then end. */
export class HtmlEventStream {
  private readonly tokenizer: Tokenizer;
  /** Open elements: 16 MiB of unclosed tags is 3 million of them (chunked-stack.ts says why not an array). */
  private readonly open = new ChunkedStack<string>();
  private readonly openCount = new Map<string, number>();
  private readonly names = new Map<string, string>();
  /** The latest tag name as written, what it was read as, and in which context (`image` differs in svg). */
  private lastTagName: { raw: string; name: string; foreign: boolean } | undefined;
  /** True where a foreign (svg, math) context starts, false where an integration point ends one. */
  private readonly foreign = new ChunkedStack<boolean>();
  private tagname = '';
  /** Inside an open tag (between its name and its `>`): its attributes are being read. */
  private inOpenTag = false;
  /** Made at the tag's first attribute: most tags have none, and 200,000 `<div>`s need no 200,000 objects. */
  private attributes: Record<string, string> | undefined;
  private attributeCount = 0;
  private attributeName = '';
  private attributeValue = '';
  private written = 0;
  private readonly html: string;
  private readonly handler: HtmlHandler;

  constructor(html: string, handler: HtmlHandler) {
    this.html = html;
    this.handler = handler;
    this.tokenizer = new Tokenizer({ decodeEntities: true }, this.callbacks());
  }

  /** Feeds the next `chars` characters; false once the whole document has been written. */
  writeSome(chars: number): boolean {
    if (this.written >= this.html.length) return false;
    const end = Math.min(this.html.length, this.written + chars);
    this.tokenizer.write(this.html.slice(this.written, end));
    this.written = end;
    return this.written < this.html.length;
  }

  /** Ends the tokens, then closes at most `elements` still-open elements; false once all are closed. */
  endSome(elements: number): boolean {
    if (this.written <= this.html.length) {
      this.written = this.html.length + 1;
      this.tokenizer.end();
    }
    for (let closed = 0; closed < elements && this.open.length > 0; closed += 1) this.popElement();
    return this.open.length > 0;
  }

  private get inForeignContext(): boolean {
    return this.foreign.peek() ?? false;
  }

  private emitOpenTag(name: string): void {
    this.tagname = name;
    // The HTML spec ignores a second <form> while one is open.
    if (name === 'form' && this.openCount.has('form')) {
      this.tagname = '';
      return;
    }
    const impliesClose = openImpliesClose.get(name);
    if (impliesClose) while (this.open.length > 0 && impliesClose.has(this.open.peek()!)) this.popElement();
    if (!voidElements.has(name)) {
      this.open.push(name);
      this.openCount.set(name, (this.openCount.get(name) ?? 0) + 1);
      if (foreignElements.has(name)) this.foreign.push(true);
      else if (integrationElements.has(name)) this.foreign.push(false);
    }
    this.inOpenTag = true;
    this.attributes = undefined;
    this.attributeCount = 0;
  }

  private endOpenTag(): void {
    if (this.inOpenTag) {
      this.handler.onopentag?.(this.tagname, this.attributes ?? NO_ATTRIBUTES);
      this.inOpenTag = false;
      this.attributes = undefined;
    }
    if (voidElements.has(this.tagname)) this.handler.onclosetag?.(this.tagname);
    this.tagname = '';
  }

  private popElement(): void {
    const name = this.open.pop()!;
    const left = this.openCount.get(name)! - 1;
    if (left === 0) this.openCount.delete(name);
    else this.openCount.set(name, left);
    if (foreignElements.has(name) || integrationElements.has(name)) this.foreign.pop();
    this.handler.onclosetag?.(name);
  }

  private readTagName(start: number, end: number): string {
    // The same name as the tag before (200,000 `<div>`s, or a table's `<td>`s) is read without a
    // slice: comparing in place allocates nothing.
    const last = this.lastTagName;
    if (last !== undefined && end - start === last.raw.length && this.html.startsWith(last.raw, start) && last.foreign === this.inForeignContext)
      return last.name;
    const raw = this.html.slice(start, end);
    const lower = raw.toLowerCase();
    const name = lower === 'image' && !this.inForeignContext ? 'img' : this.interned(lower);
    this.lastTagName = { raw, name, foreign: this.inForeignContext };
    return name;
  }

  /**
   * One string per tag name: the open-element stack of 16 MiB of `<div>` holds 3 million names,
   * which as 3 million strings of their own outlived the young generation and cost the collector
   * pauses of tens of milliseconds. Caller-made names past the first thousand are kept as they are.
   */
  private interned(name: string): string {
    const known = this.names.get(name);
    if (known !== undefined) return known;
    if (this.names.size < MAX_INTERNED_NAMES) this.names.set(name, name);
    return name;
  }

  private callbacks(): TokenizerCallbacks {
    return {
      ontext: (start, end) => this.handler.ontext?.(this.html.slice(start, end)),
      ontextentity: (codepoint) => this.handler.ontext?.(String.fromCodePoint(codepoint)),
      onopentagname: (start, end) => this.emitOpenTag(this.readTagName(start, end)),
      onopentagend: () => this.endOpenTag(),
      onselfclosingtag: () => {
        const name = this.tagname;
        this.endOpenTag();
        // Only foreign content (svg, math) honours `/>`; in HTML `<div/>` opens a div.
        if (this.inForeignContext && this.open.peek() === name) this.popElement();
      },
      onclosetag: (start, end) => {
        const name = this.readTagName(start, end);
        if (!voidElements.has(name)) {
          if (this.openCount.has(name)) {
            let top: string;
            do {
              top = this.open.peek()!;
              this.popElement();
            } while (top !== name);
          } else if (name === 'p') {
            // A stray </p> is an empty paragraph, as browsers read it.
            this.emitOpenTag('p');
            this.endOpenTag();
            if (this.open.peek() === 'p') this.popElement();
          }
        } else if (name === 'br') {
          this.handler.onopentag?.('br', {});
          this.handler.onclosetag?.('br');
        }
      },
      onattribname: (start, end) => {
        this.attributeName = this.html.slice(start, end).toLowerCase();
      },
      onattribdata: (start, end) => {
        this.attributeValue += this.html.slice(start, end);
      },
      onattribentity: (codepoint) => {
        this.attributeValue += String.fromCodePoint(codepoint);
      },
      onattribend: () => {
        if (this.inOpenTag && this.attributeCount < MAX_ATTRIBUTES && !(this.attributes && Object.hasOwn(this.attributes, this.attributeName))) {
          (this.attributes ??= {})[this.attributeName] = this.attributeValue;
          this.attributeCount += 1;
        }
        this.attributeValue = '';
      },
      oncdata: (start, end, offset) => {
        if (this.inForeignContext) this.handler.ontext?.(this.html.slice(start, end - offset));
      },
      oncomment: () => {},
      ondeclaration: () => {},
      onprocessinginstruction: () => {},
      onend: () => {},
      isInForeignContext: () => this.inForeignContext,
    };
  }
}

/** Characters tokenised per step: well under a millisecond of the slowest inputs measured (a `<title>` of `&`s). */
export const HTML_STEP_CHARS = 4096;
/** Open elements closed per step at the end of a document of unclosed tags. */
const CLOSE_STEP = 4096;

export function readHtml(html: string, handler: HtmlHandler): void {
  runToEnd(htmlSteps(html, handler));
}

/**
 * The same events, in slices between turns of the event loop (work-in-slices.ts): 16 MiB of
 * HTML is about a second of tokenising even in linear time, and must not hold other callers.
 */
export function readHtmlInSlices(html: string, handler: HtmlHandler, signal?: AbortSignal): Promise<void> {
  return runInSlices(htmlSteps(html, handler), signal);
}

function* htmlSteps(html: string, handler: HtmlHandler): Steps<void> {
  const stream = new HtmlEventStream(html, handler);
  while (stream.writeSome(HTML_STEP_CHARS)) yield;
  while (stream.endSome(CLOSE_STEP)) yield;
}
