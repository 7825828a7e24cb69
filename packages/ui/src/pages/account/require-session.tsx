import type { ComponentChildren } from 'preact';
import { BASE } from '../../links.ts';
import { session } from '../../session.ts';

/** Pages behind a sign-in show the way to it instead of failing with 401. */
export function RequireSession({ children, operator = false }: { children: ComponentChildren; operator?: boolean }) {
  const current = session.value;
  if (!current || (operator && current.kind !== 'operator'))
    return (
      <p>
        {operator ? 'This page is for the operator: ' : 'This page needs a sign-in: '}
        <a href={`${BASE}sign-in`}>sign in</a>.
      </p>
    );
  return <>{children}</>;
}
