import type { Span } from '@opentelemetry/api';
import type { Context, Next } from 'koa';
import { otel, tracer } from '../observability/tracing.ts';
import type { RequestState } from './request-state.ts';

/**
 * The request's span (mounted only while tracing is on), child of the caller's W3C
 * `traceparent` when one came. Everything the request does (queries, the upstream call, the
 * PDF parse, its log lines) runs inside it. It ends when the response closes, so an event stream
 * is timed to its last event. Its attributes are the route's template, the method, the status and
 * the principal's kind: never the path's values, a query string, a header or a credential.
 */
export async function traceRequest(ctx: Context, next: Next): Promise<void> {
  const { req, res } = ctx;
  const { context, propagation, ROOT_CONTEXT, SpanKind, trace } = otel();
  const method = req.method ?? 'GET';
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
  res.once('close', () => endRequestSpan(span, ctx, method));
  await context.with(trace.setSpan(parent, span), next);
}

function endRequestSpan(span: Span, ctx: Context, method: string): void {
  const state = (ctx.state as { svc?: RequestState }).svc;
  const status = ctx.res.statusCode;
  const route = state?.route?.path;
  if (route) {
    span.updateName(`${method} ${route}`);
    span.setAttribute('http.route', route);
  }
  span.setAttributes({
    'http.response.status_code': status,
    'svc.principal.kind': state?.principal?.kind ?? 'anonymous',
    ...(state ? { 'svc.request_id': state.requestId } : {}),
  });
  if (!ctx.res.writableFinished) span.setAttribute('svc.client_disconnected', true);
  if (status >= 500) span.setStatus({ code: otel().SpanStatusCode.ERROR });
  span.end();
}
