/** The Connect UI: connect sessions (API) and the page end users open to connect their accounts. */
export { connectRoutes, CONNECT_EXCHANGE_PATH, CONNECT_TYPE_PATH, CONNECT_OAUTH_RETURN_PATH, CONNECT_ASSETS } from './connect-routes.ts';
export { connectMigrations, type ConnectTables, type ConnectSessionsTable } from './connect-migrations.ts';
export {
  CONNECT_SESSIONS_PATH,
  CONNECT_PAGE_PATH,
  CONNECT_COOKIE,
  createConnectSession,
  type CreateSessionBody,
  type CreatedSession,
} from './connect-sessions.ts';
export { ConnectSessionSchema, CreateConnectSessionRequestSchema, ConnectExchangeRequestSchema } from './connect-schemas.ts';
