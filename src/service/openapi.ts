/**
 * The service's OpenAPI 3.1 document, served at GET /openapi.json. Written by hand around the
 * very schema objects the routes validate and serialize with (schemas.ts), so what it promises
 * is what the routes enforce; tests validate real responses against it.
 */
import { ERROR_CODES } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import { connectOpenApiPaths } from './connect/connect-openapi.ts';
import { eventsOpenApiPaths } from '../events/openapi-events.ts';
import { auditOpenApiPaths } from './routes/audit-routes.ts';
import { tokenOpenApiPaths } from './routes/token-routes.ts';
import { permissionOpenApiPaths } from './routes/permission-routes.ts';
import type { Schema } from './http/schemas.ts';
import { accountPaths } from './openapi/account-paths.ts';
import { componentSchemas } from './openapi/components.ts';
import { connectorPaths } from './openapi/connector-paths.ts';
import { executeComponents } from './openapi/execute-components.ts';
import { executePaths } from './openapi/execute-paths.ts';
import { AUTHED, connectorIdParam, json, orgHeader, problems, ref } from './openapi/helpers.ts';
import { mcpOpenApiPaths } from './openapi/mcp-paths.ts';
import { metaPaths } from './openapi/meta-paths.ts';
import { oauthPaths } from './openapi/oauth-paths.ts';
import { proxyOpenApiPaths } from './openapi/proxy-paths.ts';

/** The error-code table (markdown), also in the README / docs/hosted.md. */
export function errorCodeTable(): string {
  const rows = Object.entries(ERROR_CODES).map(([code, d]) => `| \`${code}\` | ${d.status} | ${d.title} |`);
  return ['| code | status | meaning |', '|---|---|---|', ...rows].join('\n');
}

/**
 * Build the document; `serverUrl` fills `servers` (default: relative to wherever it is served).
 * With the connector registry, the execute request is typed per connector type (entity, action
 * and params of every manifest action; openapi/execute-components.ts); without it, generically.
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
        'selects a connector type by its Airbyte definition id. A scoped token (POST /api/v1/account/applications/scoped-token) acts for one',
        "customer: other customers' connectors are 404 connector_not_found, naming another customer 403 customer_forbidden.",
      ].join('\n'),
    },
    servers: [{ url: serverUrl ?? '/' }],
    'x-error-codes': Object.entries(ERROR_CODES).map(([code, d]) => ({ code, status: d.status, title: d.title })),
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Opaque access token from the token endpoint; expires (expires_in)' } },
      schemas: componentSchemas(typed),
    },
    paths: {
      ...metaPaths(),
      ...accountPaths(),
      ...connectorPaths(),
      ...oauthPaths(),
      ...executePaths(executeBody),
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
