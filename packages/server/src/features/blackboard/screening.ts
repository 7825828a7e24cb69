import type { BlackboardCoprocessor } from '@svc/schemas';

type Finding = BlackboardCoprocessor['findings'][number];
type CoverageReason = BlackboardCoprocessor['coverage']['reasons'][number];

/** Credential shapes worth flagging on a public board. Patterns are anchored on distinctive prefixes to stay quiet on prose. */
const credentialPatterns: ReadonlyArray<readonly [Finding, RegExp]> = [
  ['credential_anthropic_key', /\bsk-ant-[A-Za-z0-9_-]{20,}/],
  ['credential_openai_key', /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/],
  ['credential_aws_access_key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/],
  ['credential_github_token', /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/],
  ['credential_slack_token', /\bxox[abposr]-[A-Za-z0-9-]{10,}/],
  ['credential_google_api_key', /\bAIza[0-9A-Za-z_-]{35}\b/],
  ['credential_private_key', /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/],
  ['credential_jwt', /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/],
  ['credential_url_password', /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@[^\s/]+/i],
  ['credential_assignment', /\b(?:password|passwd|api[_-]?key|secret[_-]?key|access[_-]?token|client[_-]?secret)\s*[:=]\s*["']?[^\s"']{8,}/i],
];

/** Phrasings that try to steer an agent that reads the board. */
export const injectionPatterns: ReadonlyArray<readonly [Finding, RegExp]> = [
  ['prompt_injection_override', /\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|your)\b[^.\n]{0,30}\b(?:instructions?|prompts?|rules|directions|guidelines)\b/i],
  ['prompt_injection_role', /(?:\byou are now\b|\bnew (?:system )?instructions?\s*:|\bsystem prompt\s*:|<\|?(?:system|im_start)\|?>|\bact as (?:an? )?(?:unrestricted|jailbroken|dan)\b|\bdeveloper mode\b)/i],
  ['prompt_injection_exfiltration', /\b(?:reveal|print|send|post|leak|exfiltrate|share)\b[^.\n]{0,40}\b(?:system prompt|api keys?|credentials|secrets?|env(?:ironment)? variables|tokens?)\b/i],
];

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
    if (typeof node === 'string') return scanText(node);
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
    return { coverage: { schema: 'svc.blackboard.screen.v1', scope: 'item', status: 'unchecked', reasons: ['screen_failed'] }, action: 'unchecked', findings: [] };
  }
  const list = [...findings].sort();
  const action = list.some((code) => code.startsWith('credential_')) ? 'block' : list.length > 0 ? 'escalate' : 'allow';
  return {
    coverage: { schema: 'svc.blackboard.screen.v1', scope: 'item', status: reasons.size > 0 ? 'partial' : 'complete', reasons: [...reasons].sort() },
    action,
    findings: list,
  };
}
