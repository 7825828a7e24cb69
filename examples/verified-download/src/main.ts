/**
 * Downloads a catalog artifact the way the spec's procedure says: ask for the download plan,
 * fetch each file from its short-lived signed URL, check its SHA-256 and size against the plan,
 * attest the completion, and only then move it into place. A file that fails any check is never
 * published, and the program exits 1 naming the check.
 *
 * Run: `SVC_API_URL=https://your.svc node src/main.ts <artifact-id> <directory>`.
 * Object storage must be HTTPS on storage.googleapis.com unless you say otherwise: `--storage-host`
 * trusts another host, and `--allow-http-loopback` plain HTTP to a store on this machine. A server
 * on this machine (a loopback API URL) has its own built-in store trusted by default;
 * `--strict-storage` refuses it too.
 */
import { parseArgs } from 'node:util';
import { createClient, VerifiedDownloadError } from '@svc/client';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'storage-host': { type: 'string', multiple: true, default: [] },
    'allow-http-loopback': { type: 'boolean', default: false },
    'strict-storage': { type: 'boolean', default: false },
  },
});
const [artifactId = 'prompt-injection-rules', destination = `./${artifactId}`] = positionals;

const svc = createClient({
  storagePolicy: { hosts: values['storage-host'], allowHttpLoopback: values['allow-http-loopback'], trustLoopbackServerStore: !values['strict-storage'] },
});
const result = await svc.catalog.downloadArtifact({
  artifactId,
  destination,
  onFileStart: (file) => process.stdout.write(`fetching ${file.path} (${file.sizeBytes} bytes, sha256 ${file.sha256.slice(0, 12)}…)\n`),
});
for (const file of result.files) process.stdout.write(`verified ${file.path} sha256:${file.sha256} ${file.sizeBytes} bytes -> ${file.destination}\n`);
for (const failure of result.failures) {
  const check = failure.error instanceof VerifiedDownloadError ? ` [${failure.error.check}]` : '';
  process.stderr.write(`failed ${failure.path}${check}: ${failure.error.message}\n`);
}
process.stdout.write(
  `${result.ok ? 'ok' : 'incomplete'}: ${artifactId} revision ${result.revision}, ${result.files.length} verified, ${result.failures.length} failed\n`,
);
process.exitCode = result.ok ? 0 : 1;
