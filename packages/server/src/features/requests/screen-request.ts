import { screenValue } from '../blackboard/index.ts';
import { ServiceError } from '../../service-error.ts';

/**
 * Screens request text with the blackboard's screening. Credential-shaped text is refused
 * before anything is stored (a request is read by operators and counted on a public radar);
 * prompt-injection phrasing is kept and marked `escalate` for the operator.
 */
export function screenRequestText(value: unknown): { action: 'allow' | 'escalate'; findings: string[] } {
  const screened = screenValue(value);
  const credentials = screened.findings.filter((finding) => finding.startsWith('credential_'));
  if (credentials.length > 0) {
    throw new ServiceError(
      'request_credential_refused',
      `The request text holds what looks like a credential (${credentials.join(', ')}); nothing was stored. Remove the secret and send it again.`,
    );
  }
  return { action: screened.findings.length > 0 ? 'escalate' : 'allow', findings: [...screened.findings] };
}
