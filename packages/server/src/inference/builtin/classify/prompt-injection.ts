import { injectionPatterns } from './injection-patterns.ts';
import type { LabelScorer } from './label-scorer.ts';

/**
 * The blackboard's screening patterns (override, role play, exfiltration: the same regular
 * expressions, so a post the board escalates is classified alike), plus phrasings that screen
 * leaves to telemetry: jailbreak names, "pretend", safety bypass and hidden-instruction markers.
 */
const EXTRA_PATTERNS: readonly RegExp[] = [
  /\b(?:jailbreak|jailbroken|do anything now|dan mode)\b/i,
  /\bpretend (?:that )?(?:you are|you're|to be)\b/i,
  /\b(?:bypass|disable|turn off|ignore)\b[^.\n]{0,30}\b(?:safety|filters?|guardrails?|restrictions|moderation|content polic(?:y|ies))\b/i,
  /\b(?:repeat|print|show|output|tell me)\b[^.\n]{0,30}\b(?:your|the)\b[^.\n]{0,20}\b(?:instructions|system prompt|initial prompt|hidden prompt)\b/i,
  /\[\s*(?:system|inst)\s*\]|<<\s*sys\s*>>|###\s*(?:system|instruction)/i,
  /\bfrom now on\b[^.\n]{0,40}\b(?:you|respond|answer|act)\b/i,
];
const PATTERN_WEIGHT = 3;
const INJECTION_THRESHOLD = 1.5;

export const promptInjectionScorer: LabelScorer = {
  labels: ['injection', 'benign'],
  method:
    'Pattern rules: the blackboard screen\'s override, role and exfiltration patterns plus jailbreak, "pretend", safety-bypass and prompt-leak phrasings; each distinct match adds evidence. Catches known phrasings, not paraphrases or other languages; not a neural model.',
  logits(text) {
    const matches = [...injectionPatterns.map(([, pattern]) => pattern), ...EXTRA_PATTERNS].filter((pattern) => pattern.test(text)).length;
    return [matches * PATTERN_WEIGHT - INJECTION_THRESHOLD, 0];
  },
};
