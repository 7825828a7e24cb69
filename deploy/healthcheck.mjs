// The container's HEALTHCHECK: exit 0 when /readyz answers 200 within 3 s, 1 otherwise. /readyz
// fails while the server drains (SIGTERM) or cannot reach its database, so an orchestrator stops
// sending it traffic. Plain Node (no curl in the image); SVC_PORT as the server reads it.
const port = process.env.SVC_PORT || '8787';
try {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(3000) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
