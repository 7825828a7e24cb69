import type { BlackboardCoprocessor } from '@svc/schemas';
import { injectionPatterns } from '../../inference/builtin/classify/injection-patterns.ts';

type Finding = BlackboardCoprocessor['findings'][number];
type CoverageReason = BlackboardCoprocessor['coverage']['reasons'][number];

/** A regular expression, or a scan where no regex can say the same in linear time. */
interface Detector {
  test(text: string): boolean;
}

/** Credential shapes worth flagging on a public board. Patterns are anchored on distinctive prefixes to stay quiet on prose. */
const credentialPatterns: ReadonlyArray<readonly [Finding, Detector]> = [
  ['credential_anthropic_key', /\bsk-ant-[A-Za-z0-9_-]{20,}/],
  ['credential_openai_key', /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/],
  ['credential_aws_access_key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  ['credential_github_token', /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/],
  ['credential_slack_token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/],
  ['credential_google_api_key', /\bAIza[0-9A-Za-z_-]{35}\b/],
  ['credential_private_key', /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/],
  ['credential_jwt', { test: holdsJwt }],
  ['credential_url_password', { test: holdsUrlPassword }],
  ['credential_assignment', /\b(?:password|passwd|api[_-]?key|secret[_-]?key|access[_-]?token|client[_-]?secret)\s*[:=]\s*["']?[^\s"']{8,}/i],
];

const isWordChar = (char: string) => /\w/.test(char);
const isTokenChar = (char: string) => /[\w-]/.test(char);
const isSchemeChar = (char: string) => /[a-z0-9+.-]/i.test(char);

/*
 * The two scans below say what `\beyJ[A-Za-z0-9_-]{8,}\.eyJ…` and `\b[a-z][a-z0-9+.-]*:\/\/…`
 * said, in linear time. As regexes they start at every word boundary inside a long run of their
 * class (`-eyJ-eyJ…`, `a.a.a.…`) and read to its end from each: 65 KB of `a.` cost over a second
 * a put. Here the scan starts at the literal in the middle (`.eyJ`, `://`), checks what follows
 * it with an anchored regex, and walks back over the run before it once; runs end at the literal,
 * so no character is read from more than two places.
 */

/** A JWT: three base64url segments, the first two starting `eyJ`, the first at a word boundary. */
function holdsJwt(text: string): boolean {
  const rest = /eyJ[\w-]{8,}\.[\w-]{8}/y;
  for (let dot = text.indexOf('.eyJ'); dot !== -1; dot = text.indexOf('.eyJ', dot + 1)) {
    rest.lastIndex = dot + 1;
    if (!rest.test(text)) continue;
    let start = dot;
    while (start > 0 && isTokenChar(text[start - 1]!)) start -= 1;
    for (let at = start; at + 11 <= dot; at += 1) if (text.startsWith('eyJ', at) && (at === 0 || !isWordChar(text[at - 1]!))) return true;
  }
  return false;
}

/** A URL with a password in it: `scheme://user:password@host`, the scheme starting with a letter at a word boundary. */
function holdsUrlPassword(text: string): boolean {
  const rest = /:\/\/[^\s/:@]+:[^\s/@]+@[^\s/]/y;
  for (let separator = text.indexOf('://'); separator !== -1; separator = text.indexOf('://', separator + 1)) {
    rest.lastIndex = separator;
    if (!rest.test(text)) continue;
    let start = separator;
    while (start > 0 && isSchemeChar(text[start - 1]!)) start -= 1;
    for (let at = start; at < separator; at += 1) if (/[a-z]/i.test(text[at]!) && (at === 0 || !isWordChar(text[at - 1]!))) return true;
  }
  return false;
}

/** Scan budget: strings beyond it, or structures deeper or wider, make coverage partial. */
const MAX_STRING_CHARS = 20_000;
const MAX_DEPTH = 16;
const MAX_FIELDS = 2_000;

/**
 * A best-effort screen of every string and key in a value: telemetry, not enforcement. The
 * board stores the item either way and says what it saw (`findings`), what it suggests
 * (`action`: block for credentials, escalate for injection phrasing, else allow), and what it
 * did not look at (`coverage`).
 */
export function screenValue(value: unknown): BlackboardCoprocessor {
  const findings = new Set<Finding>();
  const reasons = new Set<CoverageReason>();
  let fields = 0;
  const scanText = (text: string) => {
    if (text.length > MAX_STRING_CHARS) reasons.add('string_truncated');
    const sample = text.length > MAX_STRING_CHARS ? text.slice(0, MAX_STRING_CHARS) : text;
    for (const [code, pattern] of credentialPatterns) if (pattern.test(sample)) findings.add(code);
    for (const [code, pattern] of injectionPatterns) if (pattern.test(sample)) findings.add(code);
  };
  const walk = (node: unknown, depth: number): void => {
    if (++fields > MAX_FIELDS) {
      reasons.add('field_budget');
      return;
    }
    if (typeof node === 'string') {
      scanText(node);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (depth >= MAX_DEPTH) {
      reasons.add('depth_limit');
      return;
    }
    if (Array.isArray(node)) {
      for (const child of node) walk(child, depth + 1);
      return;
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === 'coprocessor') continue;
      scanText(key);
      walk(child, depth + 1);
    }
  };
  try {
    walk(value, 0);
  } catch {
    return {
      coverage: { schema: 'svc.blackboard.screen.v1', scope: 'item', status: 'unchecked', reasons: ['screen_failed'] },
      action: 'unchecked',
      findings: [],
    };
  }
  const list = [...findings].sort();
  const action = list.some((code) => code.startsWith('credential_')) ? 'block' : list.length > 0 ? 'escalate' : 'allow';
  return {
    coverage: { schema: 'svc.blackboard.screen.v1', scope: 'item', status: reasons.size > 0 ? 'partial' : 'complete', reasons: [...reasons].sort() },
    action,
    findings: list,
  };
}
