export { createServer, type SvcServer, type CreateServerOptions } from './server.ts';
export { loadConfig, ConfigError, publicUrls, type Config } from './config.ts';
export { ServiceError, isServiceError } from './http/service-error.ts';
export { defineHandlers, type Handler, type HandlersOf } from './http/handler-types.ts';
export type { RequestContext } from './http/request-context.ts';
export type { PrincipalResolver } from './http/auth.ts';
export type { ServerDeps } from './deps.ts';
