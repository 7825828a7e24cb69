/**
 * Starts an svc server in this process (embedded database in a temporary directory, a free
 * port), then calls it with the typed client: health, the service root, and the model list
 * with the operator token. Run: `pnpm --filter @example/quickstart start`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient, SvcError } from '@svc/client';
import { createServer, loadConfig } from '@svc/server';

const dataDir = await mkdtemp(path.join(tmpdir(), 'svc-quickstart-'));
const server = await createServer(loadConfig({ SVC_PORT: '0', SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn' }));
const { baseUrl } = await server.listen();

try {
  const anonymous = createClient({ baseUrl });
  const health = await anonymous.system.healthz();
  process.stdout.write(`health: ${health.status} (database ${health.database.kind})\n`);

  const root = await anonymous.system.root();
  process.stdout.write(`service: ${root.name} ${root.version}, OpenAPI at ${root.links.openapi}\n`);

  try {
    await anonymous.models.list();
  } catch (error) {
    if (SvcError.isInstance(error)) process.stdout.write(`without a token: ${error.status} ${error.code}\n`);
  }

  const operator = createClient({ baseUrl, token: server.operatorToken });
  const models = await operator.models.list();
  process.stdout.write(`engines: ${models.engines.map((engine) => engine.id).join(', ')}\n`);
} finally {
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
}
