import type { z } from 'zod';
import type { ContractTree, RouteDefinition } from './route.ts';

/** One server-sent event: `event` names it (`<noun>-<action>`), `data` is JSON. */
export interface SseMessage<T> {
  event: string;
  data: T;
  id?: string;
}

type Part<R, K extends string, Mode extends 'in' | 'out'> = R extends { [P in K]: infer S extends z.ZodType }
  ? Mode extends 'in'
    ? z.input<S>
    : z.output<S>
  : undefined;

/** What a caller sends as one part of a route's request (`params`, `query`, `headers`, `body`): its schema's input. */
export type RequestPart<R, K extends 'params' | 'query' | 'headers' | 'body'> = Part<R, K, 'in'>;

type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206 | 300 | 301 | 302 | 303 | 307 | 308;

type ClientBodyOf<S> = S extends { kind: 'json-or-sse'; json: infer J extends z.ZodType; event: infer E extends z.ZodType }
  ? z.output<J> | AsyncIterable<SseMessage<z.output<E>>>
  : S extends { kind: 'json-or-bytes'; json: infer J extends z.ZodType }
    ? z.output<J> | Response
    : S extends { kind: 'text' }
      ? string
      : S extends { kind: 'bytes' }
        ? Response
        : S extends { kind: 'sse'; event: infer E extends z.ZodType }
          ? AsyncIterable<SseMessage<z.output<E>>>
          : S extends { kind: 'redirect' }
            ? { location: string; headers: Headers }
            : S extends { kind: 'empty' }
              ? undefined
              : S extends z.ZodType
                ? z.output<S>
                : never;

type ServerBodyOf<S> = S extends { kind: 'json-or-sse'; json: infer J extends z.ZodType; event: infer E extends z.ZodType }
  ? z.input<J> | AsyncIterable<SseMessage<z.input<E>>>
  : S extends { kind: 'json-or-bytes'; json: infer J extends z.ZodType }
    ? z.input<J> | Uint8Array | AsyncIterable<Uint8Array>
    : S extends { kind: 'text' }
      ? string
      : S extends { kind: 'bytes' }
        ? Uint8Array | string | AsyncIterable<Uint8Array> | NodeJS.ReadableStream
        : S extends { kind: 'sse'; event: infer E extends z.ZodType }
          ? AsyncIterable<SseMessage<z.input<E>>>
          : S extends { kind: 'redirect' } | { kind: 'empty' }
            ? undefined
            : S extends z.ZodType
              ? z.input<S>
              : never;

type Responses<R> = R extends { responses: infer M } ? M : never;

/** What a handler may answer: one member per declared status. */
export type ServerResponse<R extends RouteDefinition> = {
  [S in keyof Responses<R> & number]: { status: S; headers?: Record<string, string> } & (undefined extends ServerBodyOf<Responses<R>[S]>
    ? { body?: ServerBodyOf<Responses<R>[S]> }
    : { body: ServerBodyOf<Responses<R>[S]> });
}[keyof Responses<R> & number];

/** The validated input a handler receives. */
export interface ServerInput<R extends RouteDefinition> {
  params: Part<R, 'params', 'out'>;
  query: Part<R, 'query', 'out'>;
  headers: Part<R, 'headers', 'out'>;
  body: R extends { bodyEncoding: 'bytes' } ? Buffer : Part<R, 'body', 'out'>;
}

type Optionalise<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: T[K];
};

/** What a client method takes: only the parts the route has; all-optional parts may be left out. */
export type ClientRequest<R extends RouteDefinition> = Optionalise<{
  params: Part<R, 'params', 'in'>;
  query: Part<R, 'query', 'in'> | undefined;
  headers: Part<R, 'headers', 'in'> extends undefined ? undefined : Part<R, 'headers', 'in'> | undefined;
  body: R extends { bodyEncoding: 'bytes' } ? Uint8Array | Blob | ReadableStream<Uint8Array> : Part<R, 'body', 'in'>;
}>;

/** What a client method resolves to: the body of its success statuses. */
export type ClientResponse<R extends RouteDefinition> = {
  [S in keyof Responses<R> & SuccessStatus]: ClientBodyOf<Responses<R>[S]>;
}[keyof Responses<R> & SuccessStatus];

/** A request with nothing required may be called with no argument. */
export type RequestArgs<R extends RouteDefinition> = {} extends ClientRequest<R> ? [request?: ClientRequest<R>] : [request: ClientRequest<R>];

export type RoutesOf<C extends ContractTree> = {
  [K in keyof C]: C[K] extends RouteDefinition ? C[K] : C[K] extends ContractTree ? RoutesOf<C[K]> : never;
};
