/**
 * The service's OpenAPI 3.1 document, served at GET /openapi.json. Written by hand around the
 * very schema objects the routes validate and serialize with (schemas.ts), so what it promises
 * is what the routes enforce; tests validate real responses against it.
 */
import { ERROR_CODES } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import { executeComponents } from './openapi-execute.ts';
import { proxyOpenApiPaths } from './openapi-proxy.ts';
import { connectOpenApiPaths, connectOpenApiSchemas } from './connect/connect-openapi.ts';
import { mcpOpenApiPaths } from './openapi-mcp.ts';
import { eventsOpenApiPaths, eventsOpenApiSchemas } from '../events/openapi-events.ts';
import { auditOpenApiPaths, AuditEventListSchema } from './routes/audit-routes.ts';
import { RevokedAllSchema, TokenListSchema, tokenOpenApiPaths } from './routes/token-routes.ts';
import { PermissionsViewSchema, permissionOpenApiPaths } from './routes/permission-routes.ts';
import {
  CheckQuerySchema,
  CheckResponseSchema,
  ConnectorListSchema,
  ConnectorSchema,
  ConnectorTypeListSchema,
  ConnectorTypeSchema,
  CreateConnectorRequestSchema,
  ExecuteRequestSchema,
  ExecuteResponseSchema,
  HealthSchema,
  ListConnectorsQuerySchema,
  OAuthInitiateRequestSchema,
  OAuthInitiateResponseSchema,
  PatchConnectorRequestSchema,
  ProblemSchema,
  SearchParamsSchema,
  ScopedTokenRequestSchema,
  ScopedTokenResponseSchema,
  WidgetTokenRequestSchema,
  WidgetTokenResponseSchema,
  WorkspaceListSchema,
  WorkspacesQuerySchema,
  AirbyteExecuteResponseSchema,
  AirbyteProblemSchema,
  SyncRequestSchema,
  SyncStatusSchema,
  TokenRequestSchema,
  TokenResponseSchema,
  type Schema,
  OAUTH_CALLBACK_PATH,
} from './schemas.ts';

/** The error-code table (markdown), also in the README / docs/hosted.md. */
export function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, d]) => `| \`${code}\` | ${d.status} | ${d.title} |`);
  return ['| code | status | meaning |', '|---|---|---|', ...rows].join('\n');
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema): Schema => ({ 'application/json': { schema } });
// Callers that opt in to Airbyte's envelope get the same problem with message and errors[].message added.
const problemRef: Schema = { 'application/problem+json': { schema: { anyOf: [ref('Problem'), ref('AirbyteProblem')] } } };

/** Problem responses an operation can produce, by status (500 internal_error can happen anywhere). */
function problems(...statuses: number[]): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const s of [...new Set([...statuses, 500])].sort()) {
    const codes = Object.entries(ERROR_CODES)
      .filter(([, d]) => d.status === s)
      .map(([c]) => c);
    out[String(s)] = { description: `Problem details (codes with this status: ${codes.join(', ') || 'see table'})`, content: problemRef };
  }
  return out;
}

const AUTHED = [400, 401, 403, 413, 415, 429];
const connectorIdParam: Schema = {
  name: 'connector_id',
  in: 'path',
  required: true,
  description: 'Connector id (UUID). Unknown ids, malformed ids and other organizations\' ids all answer 404 connector_not_found.',
  schema: { type: 'string' },
};
const airbyteHeader: Schema = {
  name: 'X-ADP-Agent-SDK',
  in: 'header',
  required: false,
  description:
    "Sent by Airbyte's agent SDK (any non-empty value): execute answers in Airbyte's envelope (AirbyteExecuteResponse) and errors carry message and errors[].message (AirbyteProblem). Without it (and for applications not created with the airbyte envelope) nothing changes.",
  schema: { type: 'string' },
};
const orgHeader: Schema = {
  name: 'X-Organization-Id',
  in: 'header',
  required: false,
  description: 'Required when the application can access several organizations (400 organization_required when missing; 403 organization_forbidden when not accessible)',
  schema: { type: 'string' },
};

function queryParams(schema: Schema): Schema[] {
  const props = (schema['properties'] ?? {}) as Record<string, Schema>;
  return Object.entries(props).map(([name, s]) => ({ name, in: 'query', required: false, schema: s }));
}

/**
 * Build the document; `serverUrl` fills `servers` (default: relative to wherever it is served).
 * With the connector registry, the execute request is typed per connector type (entity, action
 * and params of every manifest action; openapi-execute.ts); without it, generically.
 */
export function buildOpenApiDocument(serverUrl?: string, registry?: ReadonlyMap<string, LoadedManifest>): Record<string, unknown> {
  const typed = registry !== undefined ? executeComponents(registry) : undefined;
  const executeBody: Schema = typed !== undefined && typed.perType.length > 0 ? { anyOf: typed.perType.map(ref) } : ref('ExecuteRequest');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard connector execution service',
      version: '1.0.0',
      description: [
        'Hosted connectors: create a connector per customer (credentials, or service-side OAuth), then execute actions against it.',
        '',
        'Authenticate with `POST /api/v1/account/applications/token` and send `Authorization: Bearer <access_token>`.',
        'Errors are RFC 9457 problem details (`application/problem+json`) with a stable `code`:',
        '',
        errorCodeTable(),
        '',
        "Airbyte's agent SDK: requests carrying `X-ADP-Agent-SDK` (or of an application created with `--envelope airbyte`) get execute answers as",
        '`{status, result, connector_metadata, execution_metadata}` (AirbyteExecuteResponse) and problems with a top-level `message` and',
        '`errors[].message` (AirbyteProblem). `workspace_name` and `external_user_id` are aliases of `customer_name` everywhere; `definition_id`',
        "selects a connector type by its Airbyte definition id. A scoped token (POST /api/v1/account/applications/scoped-token) acts for one",
        "customer: other customers' connectors are 404 connector_not_found, naming another customer 403 customer_forbidden.",
      ].join('\n'),
    },
    servers: [{ url: serverUrl ?? '/' }],
    'x-error-codes': Object.entries(ERROR_CODES).map(([code, d]) => ({ code, status: d.status, title: d.title })),
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Opaque access token from the token endpoint; expires (expires_in)' } },
      schemas: {
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
      },
    },
    paths: {
      '/healthz': {
        get: { operationId: 'healthz', summary: 'Liveness', security: [], responses: { 200: { description: 'Up', content: json(ref('Health')) } } },
      },
      '/readyz': {
        get: {
          operationId: 'readyz',
          summary: 'Readiness: the database answers',
          security: [],
          responses: { 200: { description: 'Ready', content: json(ref('Health')) }, ...problems(503) },
        },
      },
      '/openapi.json': {
        get: { operationId: 'openapi', summary: 'This document', security: [], responses: { 200: { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } } },
      },
      '/api/v1/account/applications/token': {
        post: {
          operationId: 'createAccessToken',
          summary: 'Exchange client_id and client_secret for an access token',
          security: [],
          requestBody: { required: true, content: json(ref('TokenRequest')) },
          responses: { 200: { description: 'Token', content: json(ref('TokenResponse')) }, ...problems(400, 401, 413, 415) },
        },
      },
      '/api/v1/account/applications/scoped-token': {
        post: {
          operationId: 'createScopedToken',
          summary: 'A short-lived access token limited to one customer of this organization',
          description:
            "With it, every connector endpoint answers 404 connector_not_found for other customers' connectors; lists, search and MCP show its customer's only; naming another customer is 403 customer_forbidden; endpoints that do not keep to one customer refuse it with 403. Lives at most 900 s.",
          parameters: [orgHeader],
          requestBody: { required: true, content: json(ref('ScopedTokenRequest')) },
          responses: { 200: { description: 'Token', content: json(ref('ScopedTokenResponse')) }, ...problems(...AUTHED) },
        },
      },
      '/api/v1/account/applications/widget-token': {
        post: {
          operationId: 'createWidgetToken',
          summary: "Airbyte's widget token: a Connect session for one customer, restricted to one embedding origin",
          description:
            'The pages of the session may be framed by allowed_origin only (CSP frame-ancestors), its cookie works in that frame, and the result message (switchboard:connected) is posted to that origin only. The first page, served before the session is known, may be framed by the origin the link names.',
          parameters: [orgHeader],
          requestBody: { required: true, content: json(ref('WidgetTokenRequest')) },
          responses: { 200: { description: 'The session', content: json(ref('WidgetTokenResponse')) }, ...problems(...AUTHED) },
        },
      },
      '/api/v1/workspaces': {
        get: {
          operationId: 'listWorkspaces',
          summary: "The organization's customers (Airbyte: workspaces) as {id, name}",
          parameters: [orgHeader, ...queryParams(WorkspacesQuerySchema)],
          responses: { 200: { description: 'A page', content: json(ref('WorkspaceList')) }, ...problems(400, 401, 403, 429) },
        },
      },
      '/api/v1/integrations/connector-types': {
        get: {
          operationId: 'listConnectorTypes',
          summary: 'Connector types: entities, actions with params schemas, credential variants',
          responses: { 200: { description: 'Catalog', content: json(ref('ConnectorTypeList')) }, ...problems(401, 429) },
        },
      },
      '/api/v1/integrations/connector-types/{connector_type}': {
        get: {
          operationId: 'getConnectorType',
          summary: 'One connector type',
          parameters: [{ name: 'connector_type', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { 200: { description: 'Connector type', content: json(ref('ConnectorType')) }, ...problems(401, 404, 429) },
        },
      },
      '/api/v1/integrations/connectors': {
        post: {
          operationId: 'createConnector',
          summary: 'Create a connector (variant A: credentials; variant B: server_side_oauth_secret_id)',
          description:
            "The connector type's credential check runs first (unless ?check=false): credentials the upstream refuses answer 424 upstream_credentials_rejected with the upstream's message, an unreachable upstream 503 upstream_unavailable; in both cases nothing is stored.",
          parameters: [orgHeader, ...queryParams(CheckQuerySchema)],
          requestBody: { required: true, content: json(ref('CreateConnectorRequest')) },
          responses: { 201: { description: 'Created (status active)', content: json(ref('Connector')) }, ...problems(...AUTHED, 422, 424, 502, 503) },
        },
        get: {
          operationId: 'listConnectors',
          summary: 'List connectors, oldest first, filtered and paginated',
          parameters: [orgHeader, ...queryParams(ListConnectorsQuerySchema)],
          responses: { 200: { description: 'A page', content: json(ref('ConnectorList')) }, ...problems(400, 401, 403, 429) },
        },
      },
      '/api/v1/integrations/connectors/{connector_id}': {
        get: {
          operationId: 'getConnector',
          parameters: [connectorIdParam, orgHeader],
          responses: { 200: { description: 'The connector', content: json(ref('Connector')) }, ...problems(400, 401, 403, 404, 429) },
        },
        patch: {
          operationId: 'updateConnector',
          summary: 'Rename and/or replace credentials',
          description: 'New credentials are checked like on create (unless ?check=false); they make the connector active again and resume its sync.',
          parameters: [connectorIdParam, orgHeader, ...queryParams(CheckQuerySchema)],
          requestBody: { required: true, content: json(ref('PatchConnectorRequest')) },
          responses: { 200: { description: 'Updated', content: json(ref('Connector')) }, ...problems(...AUTHED, 404, 422, 424, 502, 503) },
        },
        delete: {
          operationId: 'deleteConnector',
          summary: 'Delete a connector, its credentials and its synced data',
          parameters: [connectorIdParam, orgHeader],
          responses: { 204: { description: 'Deleted' }, ...problems(400, 401, 403, 404, 429) },
        },
      },
      '/api/v1/integrations/connectors/{connector_id}/check': {
        post: {
          operationId: 'checkConnector',
          summary: "Run the connector type's credential check with the stored credentials and update the connector's status",
          description:
            'Answers 200 either way: ok true sets status active (and resumes a paused sync); upstream_credentials_rejected sets auth_failed (sync paused); any other failure sets error.',
          parameters: [connectorIdParam, orgHeader],
          responses: { 200: { description: 'The check result and the updated connector', content: json(ref('CheckResult')) }, ...problems(...AUTHED, 404) },
        },
      },
      '/api/v1/integrations/connectors/oauth/initiate': {
        post: {
          operationId: 'initiateOAuth',
          summary: 'Start a service-side OAuth flow',
          description:
            "When the type's OAuth URLs or base URL name non-secret credential fields (Zendesk: https://{{credentials.subdomain}}.zendesk.com), send them in `credentials`: each is checked against its field's pattern (400 invalid_oauth_credentials, nothing stored), kept server side with the state, used for the code exchange and stored with the tokens.",
          parameters: [orgHeader],
          requestBody: { required: true, content: json(ref('OAuthInitiateRequest')) },
          responses: { 200: { description: 'Send the user to consent_url', content: json(ref('OAuthInitiateResponse')) }, ...problems(...AUTHED, 501) },
        },
      },
      [OAUTH_CALLBACK_PATH]: {
        get: {
          operationId: 'oauthCallback',
          summary: "The OAuth provider's redirect target (register it with each OAuth app); public",
          security: [],
          parameters: ['state', 'code', 'error', 'error_description'].map((name) => ({ name, in: 'query', required: name === 'state', schema: { type: 'string' } })),
          responses: {
            302: {
              description: 'To redirect_url with ?secret_id=... (or ?error=...&error_description=... when the provider refused or the exchange failed)',
              headers: { Location: { schema: { type: 'string', format: 'uri' } } },
            },
            ...problems(400),
          },
        },
      },
      '/api/v1/integrations/connectors/{connector_id}/execute': {
        post: {
          operationId: 'execute',
          summary: "Run an action: list, get, create, update (the upstream API) or search (synced data)",
          parameters: [connectorIdParam, orgHeader, airbyteHeader],
          requestBody: { required: true, content: json(executeBody) },
          responses: {
            200: {
              description: "The envelope: {data, meta?} (ExecuteResponse); with X-ADP-Agent-SDK, Airbyte's {status, result, connector_metadata, execution_metadata}",
              content: json({ anyOf: [ref('ExecuteResponse'), ref('AirbyteExecuteResponse')] }),
            },
            ...problems(...AUTHED, 404, 422, 424, 501, 502, 503),
          },
        },
      },
      '/api/v1/integrations/connectors/{connector_id}/sync': {
        get: {
          operationId: 'getSyncStatus',
          summary: 'Sync status: idle, running or failed; last start and finish; records per entity; last error',
          parameters: [connectorIdParam, orgHeader],
          responses: { 200: { description: 'The sync status', content: json(ref('SyncStatus')) }, ...problems(...AUTHED, 404) },
        },
        post: {
          operationId: 'startSync',
          summary: 'Start a sync of this connector now (it also runs when created and on a schedule)',
          parameters: [connectorIdParam, orgHeader],
          requestBody: { required: false, content: json(ref('SyncRequest')) },
          responses: {
            202: { description: 'Started (the status, as a run is picked up within seconds)', content: json(ref('SyncStatus')) },
            ...problems(...AUTHED, 404, 409, 503),
          },
        },
      },
      ...connectOpenApiPaths({ json, ref, problems, orgHeader, authed: AUTHED }),
      ...mcpOpenApiPaths({ json, problems, orgHeader, authed: AUTHED }),
      ...proxyOpenApiPaths({ problems, orgHeader, connectorIdParam, authed: AUTHED }),
      ...eventsOpenApiPaths({ json, ref, problems, orgHeader, connectorIdParam, authed: AUTHED }),
      ...auditOpenApiPaths({ json, ref, problems, orgHeader, authed: AUTHED }),
      ...tokenOpenApiPaths({ json, ref, problems, authed: AUTHED }),
      ...permissionOpenApiPaths({ json, ref, problems, authed: AUTHED }),
    },
  };
}
