/**
 * Text from the server (a board post, a model's answer, an error message) is anyone's: printed raw,
 * `\x1b]0;title\x07` renames the terminal and `\x1b[2J` clears it. What the CLI prints for people
 * shows every control character instead of sending it, and what it prints as JSON escapes every one.
 */

/** C0 controls but tab and newline, DEL, and the C1 controls: what a terminal acts on rather than shows. */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** DEL and the C1 controls, which JSON.stringify leaves raw (it escapes only U+0000 to U+001F). */
const RAW_IN_JSON = /[\u007f-\u009f]/g;

/** `^[` for ESC, `^G` for BEL, `^?` for DEL (caret notation, as `cat -v` and gh show them), `\u009b` for a C1 control. */
function visible(control: string): string {
  const code = control.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return '^?';
  return unicodeEscape(control);
}

function unicodeEscape(control: string): string {
  return `\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * The text with each control character but tab and newline shown as caret notation or `\u` escape:
 * no escape sequence can start, since ESC itself is never sent. One pass, linear in the text.
 */
export function terminalSafe(text: string): string {
  return text.replace(TERMINAL_CONTROLS, visible);
}

/**
 * JSON text in which every C0 and C1 control character (and DEL) is a `\u` escape, so a terminal
 * shows it and the value still parses back exactly: outside strings JSON has only ASCII structure,
 * so each such character is inside a string, where its escape means the same character.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(RAW_IN_JSON, unicodeEscape);
}
