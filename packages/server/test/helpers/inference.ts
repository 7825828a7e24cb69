import { readSse } from '@svc/client';
import { createKey, signInAgent } from '@svc/testing/identity';
import { startTestServer, type TestServer, type TestServerOptions } from '@svc/testing/test-server';

export interface InferenceServer {
  svc: TestServer;
  /** A developer key with scope `inference:invoke`. */
  key: string;
  /** POSTs JSON to a base-surface path with the key; the answer's status and parsed body. */
  post(path: string, body: unknown, init?: { token?: string; rawBody?: string }): Promise<{ status: number; body: any; headers: Headers }>;
  /** POSTs JSON and reads the server-sent events of the answer. */
  stream(path: string, body: unknown): Promise<{ status: number; contentType: string | null; events: Array<{ event: string; data: any }> }>;
}

/** A real server and an OAuth agent's developer key for the inference routes. */
export async function startInferenceServer(options: TestServerOptions = {}): Promise<InferenceServer> {
  const svc = await startTestServer(options);
  const agent = await signInAgent(svc);
  const { secret } = await createKey(agent.client, ['inference:invoke'], 'inference tests');
  const request = (path: string, body: unknown, init: { token?: string; rawBody?: string } = {}) =>
    fetch(`${svc.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${init.token ?? secret}` },
      body: init.rawBody ?? JSON.stringify(body),
    });
  return {
    svc,
    key: secret,
    async post(path, body, init) {
      const response = await request(path, body, init);
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
    },
    async stream(path, body) {
      const controller = new AbortController();
      const response = await request(path, body);
      const events: Array<{ event: string; data: any }> = [];
      for await (const message of readSse<any>(response, () => controller.abort())) events.push({ event: message.event, data: message.data });
      return { status: response.status, contentType: response.headers.get('content-type'), events };
    },
  };
}
