import { z } from 'zod';

/**
 * zod compiles a fast parser with `new Function` unless told not to, and first probes whether it
 * may (`Function('')`). The console's CSP has no 'unsafe-eval', so every probe was a refused eval:
 * a `securitypolicyviolation` event, and a report per page view once a reporting endpoint is set.
 * zod reads this setting when each object schema is built, so this module is imported before any
 * schema (main.tsx imports it first).
 */
z.config({ jitless: true });
