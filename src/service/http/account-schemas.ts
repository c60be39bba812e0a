/**
 * JSON Schemas of the service's MCP, workspace, scoped-token, Airbyte-envelope and widget-token
 * requests and responses (the rest are in schemas.ts, on the same terms).
 */
import { AccessRulesSchema } from '../auth/permissions.ts';
import { customerAliasProperties } from '../connectors/customer-aliases.ts';
import { ConnectorListSchema, ProblemSchema, str, type Schema } from './schemas.ts';

/** POST /mcp query: the scope and mode of the MCP server (src/service/routes/mcp-routes.ts). */
export const McpQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customer_name: { type: 'string', minLength: 1, maxLength: 255, description: "Expose only this customer's connectors" },
    ...customerAliasProperties({ type: 'string', minLength: 1, maxLength: 255 }),
    read_only: { type: 'boolean', description: 'Expose list, get and search only; create and update are refused with a read_only tool error' },
    max_output_bytes: {
      type: 'integer',
      minimum: 1024,
      maximum: 1048576,
      description: 'Byte budget of one execute or search result; default SWITCHBOARD_MCP_MAX_OUTPUT_BYTES (20000)',
    },
  },
};

/** GET /api/v1/workspaces query. */
export const WorkspacesQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name_contains: str('Only customers whose name contains this (ASCII letters case-insensitively)', { maxLength: 200 }),
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    cursor: str('meta.cursor of the previous page', { minLength: 1, maxLength: 1000 }),
  },
};

export const WorkspaceListSchema: Schema = {
  title: 'WorkspaceList',
  description: "The organization's customers (every customer_name its connectors use), in name order",
  type: 'object',
  additionalProperties: false,
  required: ['data', 'meta'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name'],
        properties: { id: str('A stable id derived from the organization and the name (UUID version 8)', { format: 'uuid' }), name: str('The customer_name') },
      },
    },
    meta: (ConnectorListSchema['properties'] as Record<string, Schema>)['meta'] as Schema,
  },
};

/** POST /api/v1/account/applications/scoped-token body. */
export const ScopedTokenRequestSchema: Schema = {
  title: 'ScopedTokenRequest',
  type: 'object',
  additionalProperties: false,
  required: ['customer_name'],
  properties: {
    customer_name: str('The one customer the token may act for', { minLength: 1, maxLength: 200 }),
    ...customerAliasProperties(str(undefined, { minLength: 1, maxLength: 200 })),
    permissions: { ...AccessRulesSchema, description: "The token's own allow-list, applied on top of the application's (never wider)" },
  },
};

export const ScopedTokenResponseSchema: Schema = {
  title: 'ScopedTokenResponse',
  type: 'object',
  additionalProperties: false,
  required: ['access_token', 'token', 'token_type', 'expires_in', 'customer_name'],
  properties: {
    access_token: str('Opaque bearer token limited to one customer of this organization'),
    token: str('The same token (the field name Airbyte clients read)'),
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', description: 'Seconds until the token expires (at most 900, and at most SWITCHBOARD_TOKEN_TTL_SECONDS)' },
    customer_name: str('The customer the token is limited to'),
  },
};

/** Execute answer in Airbyte's envelope (opt-in: X-ADP-Agent-SDK, or an application created with the airbyte envelope). */
export const AirbyteExecuteResponseSchema: Schema = {
  title: 'AirbyteExecuteResponse',
  description:
    'list → result = the records, connector_metadata = the list meta; get/create/update → result = the record, connector_metadata null; search / context_store_search → result = {data, meta: {has_more, cursor, took_ms}}',
  type: 'object',
  additionalProperties: false,
  required: ['status', 'result', 'connector_metadata', 'execution_metadata'],
  properties: {
    status: { type: 'string', enum: ['success'] },
    result: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] },
    connector_metadata: { type: ['object', 'null'] },
    execution_metadata: {
      type: 'object',
      additionalProperties: false,
      required: ['connector_instance_id', 'execution_time_ms'],
      properties: {
        connector_instance_id: str('The connector id', { format: 'uuid' }),
        execution_time_ms: { type: 'integer', description: 'How long the action took in the service' },
      },
    },
  },
};

/** A problem as Airbyte's SDK reads it: ours, plus message and errors[].message. */
export const AirbyteProblemSchema: Schema = {
  title: 'AirbyteProblem',
  description:
    'Problem details plus a top-level message (= detail) and errors[] whose entries carry message and userPresentableMessage (one entry with the detail when there are no field errors).',
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'message', 'errors'],
  properties: {
    ...(ProblemSchema['properties'] as Record<string, Schema>),
    message: str('The detail again, where the SDK reads it'),
    errors: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['message', 'userPresentableMessage'],
        properties: {
          path: { type: 'string' },
          message: { type: 'string' },
          userPresentableMessage: { type: 'string', description: 'path and message together' },
        },
      },
    },
  },
};

/** POST /api/v1/account/applications/widget-token body: a Connect session restricted to one origin. */
export const WidgetTokenRequestSchema: Schema = {
  title: 'WidgetTokenRequest',
  type: 'object',
  additionalProperties: false,
  required: ['customer_name', 'allowed_origin'],
  properties: {
    customer_name: str('The customer whose connectors the Connect UI creates, re-authorizes and checks', { minLength: 1, maxLength: 200 }),
    ...customerAliasProperties(str(undefined, { minLength: 1, maxLength: 200 })),
    allowed_origin: str('The one origin (scheme://host[:port]) that may frame the Connect UI of this session and receive its result message', {
      minLength: 1,
      maxLength: 300,
    }),
    allowed_connector_types: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: { type: 'string', minLength: 1, maxLength: 100 },
      description: 'Connector types offered (default: all)',
    },
    redirect_url: str('Where the page sends the user when done; must be on allowed_origin', { format: 'uri', maxLength: 2000 }),
  },
};

export const WidgetTokenResponseSchema: Schema = {
  title: 'WidgetTokenResponse',
  type: 'object',
  additionalProperties: false,
  required: ['token', 'url', 'expires_at', 'allowed_origin'],
  properties: {
    token: str('The Connect session token (sbx_...), already in url'),
    url: str('Open or frame this from allowed_origin: <public url>/connect?origin=<allowed_origin>#session=<token>', { format: 'uri' }),
    expires_at: str(undefined, { format: 'date-time' }),
    allowed_origin: str('The origin the session is restricted to'),
  },
};
