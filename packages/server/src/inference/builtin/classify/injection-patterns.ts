/**
 * Phrasings that try to steer an agent that reads text. The blackboard's screen reports them as
 * findings and the prompt-injection classifier counts them, so both live with the engine (features
 * may import engines, never the reverse).
 */
export type InjectionFinding = 'prompt_injection_override' | 'prompt_injection_role' | 'prompt_injection_exfiltration';

export const injectionPatterns: ReadonlyArray<readonly [InjectionFinding, RegExp]> = [
  [
    'prompt_injection_override',
    /\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|your)\b[^.\n]{0,30}\b(?:instructions?|prompts?|rules|directions|guidelines)\b/i,
  ],
  [
    'prompt_injection_role',
    /(?:\byou are now\b|\bnew (?:system )?instructions?\s*:|\bsystem prompt\s*:|<\|?(?:system|im_start)\|?>|\bact as (?:an? )?(?:unrestricted|jailbroken|dan)\b|\bdeveloper mode\b)/i,
  ],
  [
    'prompt_injection_exfiltration',
    /\b(?:reveal|print|send|post|leak|exfiltrate|share)\b[^.\n]{0,40}\b(?:system prompt|api keys?|credentials|secrets?|env(?:ironment)? variables|tokens?)\b/i,
  ],
];
