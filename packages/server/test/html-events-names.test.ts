import test from 'ava';
import { Parser } from 'htmlparser2';
import { readHtml, type HtmlHandler } from '../src/bounded/html-events.ts';

/** The open and close events of `html`, as one line each. */
function events(read: (handler: HtmlHandler) => void): string[] {
  const heard: string[] = [];
  read({
    onopentag: (name, attributes) =>
      heard.push(
        `<${name}${Object.entries(attributes)
          .map(([key, value]) => ` ${key}=${value}`)
          .join('')}>`,
      ),
    onclosetag: (name) => heard.push(`</${name}>`),
  });
  return heard;
}
const ours = (html: string) => events((handler) => readHtml(html, handler));
const theirs = (html: string) =>
  events((handler) => {
    const parser = new Parser(handler, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
    parser.end(html);
  });

// A tag name equal to the one before is read without a slice; these check that the shortcut
// gives what reading it afresh gives, where case, context and attributes differ.
const documents = [
  '<div><div><DIV><Div>x</div></DIV></div>',
  '<image><svg><image></image></svg><image>',
  '<td a="1"><td><td b="2" b="3">',
  '<p>one<p>two<P>three',
  '<a href="x">a</a><ab>b</ab><a>c</a>',
];

for (const html of documents) {
  test(`the events of ${html} are htmlparser2's`, (t) => {
    t.deepEqual(ours(html), theirs(html));
  });
}

test('a tag without attributes is handed an empty object, and one with them gets its own', (t) => {
  const seen: Array<Readonly<Record<string, string>>> = [];
  readHtml('<div><div id="a"><div>', { onopentag: (_name, attributes) => seen.push(attributes) });
  t.deepEqual(seen, [{}, { id: 'a' }, {}]);
  t.not(seen[1], seen[0]);
});
