import { asksForEveryone, everyoneViewWho, EVERYONE_FLAG, type EveryoneView, type Principal } from '@svc/schemas';
import { ServiceError } from '../service-error.ts';

/**
 * Whose rows a list shows: every principal's (the route's operator view, asked for and allowed),
 * or the caller's own. The adapter decides it; a store filters by it and never checks who asks.
 */
export type RowScope = { readonly everyone: true } | { readonly everyone: false; readonly principal: Principal };

/**
 * Whether this call asks for everyone's rows, refusing (403 `everyone_view_not_allowed`) a caller
 * the route's view does not allow: the operator, or a principal holding every listed scope.
 */
export function everyoneAsked(view: EveryoneView, query: unknown, principal: Principal): boolean {
  if (!asksForEveryone(view, query)) return false;
  const allowed =
    principal.kind === 'operator' || (view.scopes !== undefined && view.scopes.length > 0 && view.scopes.every((scope) => principal.scopes.includes(scope)));
  if (!allowed) {
    throw new ServiceError(
      'everyone_view_not_allowed',
      `${EVERYONE_FLAG}=true shows every principal's rows, which only ${everyoneViewWho(view)} may see; leave it out to list yours.`,
    );
  }
  return true;
}
