import { createServer, type AddressInfo } from 'node:net';

/** A loopback port free right now (for servers that must keep one port across restarts or share a public URL). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
    probe.once('error', reject);
  });
}
