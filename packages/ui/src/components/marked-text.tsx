/**
 * Characters that change how text reads without showing themselves: the bidirectional controls
 * (an override turns "invoice‮exe.txt" into what looks like "invoicetxt.exe") and the zero-width
 * ones (two strings that look equal, a word that is not the word it shows). One character class,
 * so the scan is linear in the text.
 */
const HIDDEN = /([\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF])/;

const NAMES: Record<string, string> = {
  '\u061C': 'ARABIC LETTER MARK',
  '\u200B': 'ZERO WIDTH SPACE',
  '\u200C': 'ZERO WIDTH NON-JOINER',
  '\u200D': 'ZERO WIDTH JOINER',
  '\u200E': 'LEFT-TO-RIGHT MARK',
  '\u200F': 'RIGHT-TO-LEFT MARK',
  '\u202A': 'LEFT-TO-RIGHT EMBEDDING',
  '\u202B': 'RIGHT-TO-LEFT EMBEDDING',
  '\u202C': 'POP DIRECTIONAL FORMATTING',
  '\u202D': 'LEFT-TO-RIGHT OVERRIDE',
  '\u202E': 'RIGHT-TO-LEFT OVERRIDE',
  '\u2060': 'WORD JOINER',
  '\u2061': 'FUNCTION APPLICATION',
  '\u2062': 'INVISIBLE TIMES',
  '\u2063': 'INVISIBLE SEPARATOR',
  '\u2064': 'INVISIBLE PLUS',
  '\u2066': 'LEFT-TO-RIGHT ISOLATE',
  '\u2067': 'RIGHT-TO-LEFT ISOLATE',
  '\u2068': 'FIRST STRONG ISOLATE',
  '\u2069': 'POP DIRECTIONAL ISOLATE',
  '\uFEFF': 'ZERO WIDTH NO-BREAK SPACE',
};

/** `U+202E`: how a hidden character is shown in its place. */
export const codePoint = (character: string) => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

export const hasHiddenCharacters = (text: string) => HIDDEN.test(text);

const EVERY_HIDDEN = new RegExp(HIDDEN.source, 'g');
/** How many hidden characters `text` holds: each is drawn as a marker element, which is what drawing it costs (first-paint.tsx's budget). */
export const hiddenCharacterCount = (text: string) => text.match(EVERY_HIDDEN)?.length ?? 0;

/**
 * Untrusted text with each hidden character replaced by a visible, labelled marker (as GitHub
 * marks them), so it can neither reorder the text around it nor hide in it. The rest is a text node.
 */
export function MarkedText({ text }: { text: string }) {
  if (!hasHiddenCharacters(text)) return <>{text}</>;
  // split with a capturing group: the hidden characters are at the odd indexes.
  return (
    <>
      {text.split(HIDDEN).map((part, index) =>
        index % 2 === 1 ? (
          <span key={index} class="hidden-char" title={NAMES[part]}>
            {codePoint(part)}
          </span>
        ) : (
          part
        ),
      )}
    </>
  );
}

/** Said once above a text that has hidden characters, as GitHub warns of bidirectional text. */
export function HiddenCharactersWarning() {
  return (
    <p class="hidden-warning" role="note">
      This text contains hidden or bidirectional Unicode characters, marked in it: it may not read as it looks.
    </p>
  );
}
