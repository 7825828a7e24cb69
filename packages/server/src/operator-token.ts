import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The operator token from configuration, or one generated once into the data directory
 * (mode 0600, so only the server's user can read it) and reused on later starts.
 */
export async function ensureOperatorToken(configured: string | undefined, dataDir: string): Promise<{ token: string; file?: string }> {
  if (configured) return { token: configured };
  const file = path.join(dataDir, 'operator-token');
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing.length >= 16) return { token: existing, file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const token = `svc_op_${randomBytes(32).toString('base64url')}`;
  await writeFile(file, `${token}\n`, { mode: 0o600, flag: 'w' });
  return { token, file };
}
