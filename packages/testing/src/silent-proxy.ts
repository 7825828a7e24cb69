import http from 'node:http';

/** A rule that makes the proxy go silent on an answer: after `afterBytes` of its body, nothing more is sent and nothing is closed. */
export interface SilenceRule {
  /** Which requests it applies to (method and URL as the client sent them). */
  match: (request: http.IncomingMessage) => boolean;
  /** Body bytes passed on before the silence (0: the headers only). */
  afterBytes: number;
  /**
   * Hold the status line and headers too: the connection is taken and nothing at all comes back,
   * as from a store that accepts and never answers (released, the whole answer flows).
   */
  beforeHeaders?: boolean;
  /** How many matching requests it silences (default: every one until removed). */
  times?: number;
}

/** One answer the proxy passed on: the request, the status and the body bytes the client got. */
export interface ProxiedAnswer {
  method: string;
  url: string;
  range: string | undefined;
  status: number;
  bytes: number;
  /** Held silent by a rule (the client got `bytes` and then nothing). */
  silenced: boolean;
}

export interface SilentProxy {
  url: string;
  port: number;
  answers: ProxiedAnswer[];
  /** Silences matching answers from now on; answers the rule so it can be removed. */
  silence(rule: SilenceRule): SilenceRule;
  /** Lets the answers a rule holds go on (their held bytes flow again) and stops it silencing new ones. */
  release(rule: SilenceRule): void;
  /**
   * Sends the body of matching answers at most `bytesPerTick` every 10 ms from now on (undefined:
   * at full speed again), so an interrupt lands partway through a large file on any machine.
   */
  pace(pacing: { match: (request: http.IncomingMessage) => boolean; bytesPerTick: number } | undefined): void;
  close(): Promise<void>;
}

/**
 * A proxy in front of a real server that can go silent mid-answer without closing the
 * connection, as a stuck load balancer or a half-dead peer does: what a client's idle timeout
 * and a second process's lock have to be tested against. Requests pass on as they came (Host
 * included, so signed URLs still verify when the server's public URL is the proxy's).
 */
export async function startSilentProxy(target: { host?: string; port: number }, listenPort = 0): Promise<SilentProxy> {
  const answers: ProxiedAnswer[] = [];
  const rules = new Map<SilenceRule, { left: number; waiting: Set<() => void> }>();
  let pacing: Parameters<SilentProxy['pace']>[0];
  /** Writes `chunk` (when this request is paced: in slices of the pacing's size, each followed by 10 ms), waiting for drain. */
  const write = async (request: http.IncomingMessage, response: http.ServerResponse, chunk: Buffer) => {
    const paced = pacing?.match(request) === true;
    const step = paced ? Math.max(1, pacing!.bytesPerTick) : chunk.length;
    for (let offset = 0; offset < chunk.length && !response.destroyed; offset += step) {
      if (!response.write(chunk.subarray(offset, offset + step))) await new Promise((resolve) => response.once('drain', resolve));
      if (paced) await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  const server = http.createServer((request, response) => {
    const upstream = http.request(
      { host: target.host ?? '127.0.0.1', port: target.port, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        // A client that goes away mid-answer destroys the upstream, which ends its body with 'aborted': nothing to report.
        pass(answer).catch(() => response.destroy());
      },
    );
    const pass = async (answer: http.IncomingMessage) => {
      const seen: ProxiedAnswer = {
        method: request.method ?? 'GET',
        url: request.url ?? '',
        range: request.headers.range,
        status: answer.statusCode ?? 0,
        bytes: 0,
        silenced: false,
      };
      answers.push(seen);
      let rule: SilenceRule | undefined;
      for (const [candidate, state] of rules) {
        if (state.left > 0 && candidate.match(request)) {
          state.left -= 1;
          rule = candidate;
          break;
        }
      }
      const hold = async () => {
        const state = rule && rules.get(rule);
        if (!state) return;
        seen.silenced = true;
        await new Promise<void>((resolve) => {
          state.waiting.add(resolve);
          response.once('close', resolve);
        });
        rule = undefined;
      };
      if (rule?.beforeHeaders) {
        await hold();
        if (response.destroyed) return;
      }
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      response.flushHeaders();
      if (rule && rule.afterBytes === 0) await hold();
      for await (const chunk of answer as AsyncIterable<Buffer>) {
        if (response.destroyed) break;
        let rest = chunk;
        if (rule && seen.bytes + rest.length >= rule.afterBytes) {
          const before = rest.subarray(0, rule.afterBytes - seen.bytes);
          if (before.length > 0) response.write(before);
          seen.bytes += before.length;
          rest = rest.subarray(before.length);
          await hold();
          if (response.destroyed) break;
        }
        seen.bytes += rest.length;
        if (rest.length > 0) await write(request, response, rest);
      }
      response.end();
    };
    upstream.on('error', () => response.destroy());
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const proxy: SilentProxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    answers,
    silence(rule) {
      rules.set(rule, { left: rule.times ?? Number.POSITIVE_INFINITY, waiting: new Set() });
      return rule;
    },
    pace(next) {
      pacing = next;
    },
    release(rule) {
      const state = rules.get(rule);
      rules.delete(rule);
      for (const resume of state?.waiting ?? []) resume();
    },
    async close() {
      for (const rule of [...rules.keys()]) proxy.release(rule);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
