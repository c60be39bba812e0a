/**
 * The hosted service (spec: hosted execution): accounts and tokens, connectors, service-side
 * OAuth and execute over HTTP, on SQLite or PostgreSQL.
 */
export { buildApp, listeningUrl, type BuildAppOptions } from './http/app.ts';
export { startService, HOSTED_MIGRATIONS, type RunningService, type StartServiceOptions } from './http/server.ts';
export {
  loadServiceConfig,
  defaultServiceConfig,
  connectorTypeConfigFromEnv,
  typeEnvPrefix,
  CONFIG_VARIABLES,
  type ServiceConfig,
  type ConnectorTypeConfig,
  type OAuthAppConfig,
} from './config.ts';
export { createApplication, grantOrganization, issueAccessToken, type CreatedApplication } from './auth/accounts.ts';
export { buildOpenApiDocument, errorCodeTable } from './openapi.ts';
export { createServiceLogger, REDACT_PATHS } from './ops/logger.ts';
export { OAUTH_CALLBACK_PATH } from './connectors/oauth-flow.ts';
export { runSearch, type SearchRequest } from './data/search-bridge.ts';
export type { ServiceContext, ServiceHooks } from './context.ts';
export type { Problem } from './http/problem.ts';
