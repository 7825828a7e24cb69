import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { createObjectStore, importCatalog } from './server-internals.ts';
import { startSilentProxy, type SilentProxy } from './silent-proxy.ts';
import { startTestServer, type TestServer } from './test-server.ts';

/**
 * A test server whose public URL is a SilentProxy in front of it (so the signed download URLs
 * point at the proxy too), with one hosted artifact of the given files imported into its
 * catalog. Close the proxy, then the server.
 */
export async function startServerBehindProxy(artifactId: string, files: Record<string, Buffer>): Promise<{ svc: TestServer; proxy: SilentProxy }> {
  const [proxyPort, serverPort] = [await freePort(), await freePort()];
  const publicUrl = `http://127.0.0.1:${proxyPort}`;
  const svc = await startTestServer({
    env: { SVC_CATALOG_DEMO: 'off', SVC_PORT: String(serverPort), SVC_PUBLIC_URL: publicUrl, SVC_PUBLIC_API_URL: publicUrl },
  });
  const proxy = await startSilentProxy({ port: serverPort }, proxyPort);
  const work = await mkdtemp(path.join(tmpdir(), 'svc-proxied-catalog-'));
  for (const [name, bytes] of Object.entries(files)) await writeFile(path.join(work, name), bytes);
  await importCatalog(
    { sequelize: svc.server.deps.database.sequelize, store: await createObjectStore(svc.server.deps), baseDir: work },
    [
      { kind: 'artifact', id: artifactId, name: artifactId, type: 'model', license: 'mit', hosting: 'hosted', source: 'upload' },
      { kind: 'version', artifactId, revision: 'v1' },
      ...Object.keys(files).map((name) => ({ kind: 'file', artifactId, revision: 'v1', path: name, contentFile: name })),
    ].map((value, index) => ({ line: index + 1, value })),
  );
  return { svc, proxy };
}
