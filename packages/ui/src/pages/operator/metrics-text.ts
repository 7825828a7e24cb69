import { contract, walkContract } from '@svc/schemas';

/** One route's traffic since the process started, read from the Prometheus text of /v1/metrics. */
export interface RouteTraffic {
  /** The contract's key (`blackboard.list`), as the metric labels it. */
  route: string;
  /** What a person reads: the method and path (`GET /v1/blackboard`), or the key when the contract has no such route. */
  label: string;
  ok: number;
  clientErrors: number;
  serverErrors: number;
  /** Mean time to answer, in milliseconds (the histogram's sum over its count). */
  meanMs: number | undefined;
}

/** Inference calls of one model since the process started. */
export interface ModelTraffic {
  model: string;
  ok: number;
  failed: number;
  tokens: number;
}

// Prometheus lines: a fixed-shape label set and a number. Each pattern is anchored and its parts
// are separated by literal text, so none backtracks (regex-lint).
const REQUESTS = /^svc_http_requests_total\{route="([^"]*)",method="([A-Z]+)",status="(\d{3})"\} (\d+(?:\.\d+)?)$/;
const DURATION = /^svc_http_request_duration_seconds_(sum|count)\{route="([^"]*)",method="([A-Z]+)"\} ([\d.e+-]+)$/;
const CALLS = /^svc_inference_calls_total\{operation="[^"]*",model="([^"]*)",engine="[^"]*",outcome="(ok|error)"\} (\d+)$/;
const TOKENS = /^svc_inference_tokens_total\{operation="[^"]*",model="([^"]*)"[^}]*\} (\d+)$/;

/** The console's own files and pages: every page view fetches them, so they would lead any ranking and say nothing about the API. */
export const isConsoleRoute = (route: string) => route.startsWith('console.');

let labels: Map<string, string> | undefined;
const labelOf = (route: string, method: string) => {
  labels ??= new Map(walkContract(contract).map(({ id, route }) => [id, `${route.method} ${route.path}`]));
  return labels.get(route) ?? `${method} ${route}`;
};

/** Requests per route and status class, with the mean latency, busiest first; the console's own routes left out. */
export function trafficByRoute(metrics: string): RouteTraffic[] {
  const rows = new Map<string, RouteTraffic>();
  const durations = new Map<string, { sum: number; count: number }>();
  for (const line of metrics.split('\n')) {
    const request = REQUESTS.exec(line);
    if (request) {
      const [, route, method, status, value] = request as unknown as [string, string, string, string, string];
      if (isConsoleRoute(route)) continue;
      const key = `${method} ${route}`;
      const row = rows.get(key) ?? { route, label: labelOf(route, method), ok: 0, clientErrors: 0, serverErrors: 0, meanMs: undefined };
      const count = Number(value);
      if (status.startsWith('5')) row.serverErrors += count;
      else if (status.startsWith('4')) row.clientErrors += count;
      else row.ok += count;
      rows.set(key, row);
      continue;
    }
    const duration = DURATION.exec(line);
    if (duration) {
      const [, part, route, method, value] = duration as unknown as [string, 'sum' | 'count', string, string, string];
      const key = `${method} ${route}`;
      const entry = durations.get(key) ?? { sum: 0, count: 0 };
      entry[part] = Number(value);
      durations.set(key, entry);
    }
  }
  for (const [key, row] of rows) {
    const duration = durations.get(key);
    if (duration && duration.count > 0) row.meanMs = (duration.sum / duration.count) * 1000;
  }
  const total = (row: RouteTraffic) => row.ok + row.clientErrors + row.serverErrors;
  return [...rows.values()].sort((a, b) => total(b) - total(a) || a.label.localeCompare(b.label));
}

/** Inference calls and tokens per model (every operation summed), busiest first. */
export function trafficByModel(metrics: string): ModelTraffic[] {
  const rows = new Map<string, ModelTraffic>();
  const rowOf = (model: string) => {
    let row = rows.get(model);
    if (!row) rows.set(model, (row = { model, ok: 0, failed: 0, tokens: 0 }));
    return row;
  };
  for (const line of metrics.split('\n')) {
    const call = CALLS.exec(line);
    if (call) {
      const row = rowOf(call[1]!);
      if (call[2] === 'ok') row.ok += Number(call[3]);
      else row.failed += Number(call[3]);
      continue;
    }
    const tokens = TOKENS.exec(line);
    if (tokens) rowOf(tokens[1]!).tokens += Number(tokens[2]);
  }
  return [...rows.values()].filter((row) => row.ok + row.failed > 0).sort((a, b) => b.ok + b.failed - (a.ok + a.failed));
}
