/**
 * The OpenAPI document's component schemas: the very schema objects the routes validate and
 * serialize with, and (with the registry) the execute request typed per connector type.
 */
import { connectOpenApiSchemas } from '../connect/connect-openapi.ts';
import { eventsOpenApiSchemas } from '../../events/openapi-events.ts';
import { AuditEventListSchema } from '../routes/audit-routes.ts';
import { RevokedAllSchema, TokenListSchema } from '../routes/token-routes.ts';
import { PermissionsViewSchema } from '../routes/permission-routes.ts';
import {
  CheckResponseSchema,
  ConnectorListSchema,
  ConnectorSchema,
  ConnectorTypeListSchema,
  ConnectorTypeSchema,
  CreateConnectorRequestSchema,
  ExecuteRequestSchema,
  ExecuteResponseSchema,
  HealthSchema,
  OAuthInitiateRequestSchema,
  OAuthInitiateResponseSchema,
  PatchConnectorRequestSchema,
  ProblemSchema,
  SearchParamsSchema,
  SyncRequestSchema,
  SyncStatusSchema,
  TokenRequestSchema,
  TokenResponseSchema,
  type Schema,
} from '../http/schemas.ts';
import {
  AirbyteExecuteResponseSchema,
  AirbyteProblemSchema,
  ScopedTokenRequestSchema,
  ScopedTokenResponseSchema,
  WidgetTokenRequestSchema,
  WidgetTokenResponseSchema,
  WorkspaceListSchema,
} from '../http/account-schemas.ts';
import { ref } from './helpers.ts';

/** The schemas; `typed`: the per-type execute requests (execute-components.ts), when the registry is known. */
export function componentSchemas(typed: { schemas: Record<string, Schema> } | undefined): Record<string, Schema> {
  return {
    Problem: ProblemSchema,
    AirbyteProblem: AirbyteProblemSchema,
    AirbyteExecuteResponse: AirbyteExecuteResponseSchema,
    WorkspaceList: WorkspaceListSchema,
    ScopedTokenRequest: ScopedTokenRequestSchema,
    ScopedTokenResponse: ScopedTokenResponseSchema,
    WidgetTokenRequest: WidgetTokenRequestSchema,
    WidgetTokenResponse: WidgetTokenResponseSchema,
    TokenRequest: TokenRequestSchema,
    TokenResponse: TokenResponseSchema,
    Connector: ConnectorSchema,
    ConnectorList: ConnectorListSchema,
    CheckResult: { ...CheckResponseSchema, properties: { ...(CheckResponseSchema['properties'] as Schema), connector: ref('Connector') } },
    CreateConnectorRequest: CreateConnectorRequestSchema,
    PatchConnectorRequest: PatchConnectorRequestSchema,
    OAuthInitiateRequest: OAuthInitiateRequestSchema,
    OAuthInitiateResponse: OAuthInitiateResponseSchema,
    ExecuteRequest: ExecuteRequestSchema,
    ExecuteResponse: ExecuteResponseSchema,
    SearchParams: SearchParamsSchema,
    SyncRequest: SyncRequestSchema,
    SyncStatus: SyncStatusSchema,
    ConnectorType: ConnectorTypeSchema,
    ConnectorTypeList: ConnectorTypeListSchema,
    Health: HealthSchema,
    ...(typed?.schemas ?? {}),
    ...connectOpenApiSchemas,
    ...eventsOpenApiSchemas,
    AuditEventList: AuditEventListSchema,
    TokenList: TokenListSchema,
    RevokedAll: RevokedAllSchema,
    Permissions: PermissionsViewSchema,
  };
}
