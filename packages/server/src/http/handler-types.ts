import type { ContractTree, RouteDefinition, ServerInput, ServerResponse } from '@svc/schemas';
import type { RequestContext } from './request-context.ts';

/** A handler gets validated input and answers one of the route's declared statuses. */
export type Handler<R extends RouteDefinition> = (input: ServerInput<R>, request: RequestContext) => Promise<ServerResponse<R>>;

/** Handlers in the contract's shape: a missing or mistyped handler is a compile error. */
export type HandlersOf<C extends ContractTree> = {
  [K in keyof C]: C[K] extends RouteDefinition ? Handler<C[K]> : C[K] extends ContractTree ? HandlersOf<C[K]> : never;
};

/** Identity function that types a feature's handlers against its contract. */
export function defineHandlers<C extends ContractTree>(_contract: C, handlers: HandlersOf<C>): HandlersOf<C> {
  return handlers;
}

/**
 * A route's admission, run before its body is read (auth already passed): it refuses by
 * throwing (a full queue, a rate limit), or holds a place for the request and answers how to
 * give it back; the adapter gives it back when the request ends, whatever happened.
 */
export type AdmitStep = (request: RequestContext) => Promise<(() => void) | void>;

/** A handler with an admission step decided before its body's bytes are read. */
export function withAdmission<H extends (...args: never[]) => unknown>(admit: AdmitStep, handler: H): H & { admit: AdmitStep } {
  return Object.assign(handler, { admit });
}

export type AnyHandler = ((
  input: Record<string, unknown>,
  request: RequestContext,
) => Promise<{ status: number; body?: unknown; headers?: Record<string, string> }>) & { admit?: AdmitStep };

/** Finds the handler of a dotted operation id in a handler tree. */
export function handlerAt(handlers: unknown, id: string): AnyHandler | undefined {
  let node: unknown = handlers;
  for (const key of id.split('.')) node = (node as Record<string, unknown> | undefined)?.[key];
  return typeof node === 'function' ? (node as AnyHandler) : undefined;
}
