/**
 * JSON Schemas of the service's requests and responses. The routes validate with them and
 * Fastify serializes successes with them (so a connector response can never carry a field the
 * schema does not name, such as credentials); the OpenAPI document (openapi.ts) is assembled
 * from the same objects, so the two cannot drift apart.
 *
 * Kept to the subset both ajv draft-07 (Fastify) and JSON Schema 2020-12 (OpenAPI 3.1) read
 * alike: no `nullable`, no `$defs`, type arrays for nullable values.
 */
import { ERROR_CODES } from '../../errors/index.ts';
import { customerAliasProperties } from '../connectors/customer-aliases.ts';

/** Where providers send the user back after an OAuth consent (public: no bearer token). */
export const OAUTH_CALLBACK_PATH = '/api/v1/integrations/connectors/oauth/callback';

export type Schema = Record<string, unknown>;

export const str = (description?: string, extra: Schema = {}): Schema => ({ type: 'string', ...(description ? { description } : {}), ...extra });

export const ProblemSchema: Schema = {
  title: 'Problem',
  description: 'RFC 9457 problem details; every error response has this shape (Content-Type: application/problem+json).',
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: str('urn:switchboard:problem:<code>'),
    title: str('Short summary of the code'),
    status: { type: 'integer', description: 'HTTP status' },
    detail: str('What went wrong in this occurrence'),
    code: { type: 'string', enum: Object.keys(ERROR_CODES), description: 'Stable machine-readable code (see the table in info.description)' },
    errors: {
      type: 'array',
      description: 'Validation problems: path is a JSON Pointer into the body, or query:<name> / path:<name> / header:<name>',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } } },
    },
    instance: str('The request path'),
    details: { type: 'object', description: 'Context: upstream_status, upstream_body (credentials removed), valid choices, retry_after_ms...' },
  },
};

export const TokenRequestSchema: Schema = {
  title: 'TokenRequest',
  type: 'object',
  additionalProperties: false,
  required: ['client_id', 'client_secret'],
  properties: { client_id: str(undefined, { minLength: 1, maxLength: 200 }), client_secret: str(undefined, { minLength: 1, maxLength: 500 }) },
};

export const TokenResponseSchema: Schema = {
  title: 'TokenResponse',
  type: 'object',
  additionalProperties: false,
  required: ['access_token', 'token_type', 'expires_in'],
  properties: {
    access_token: str('Opaque bearer token'),
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer', description: 'Seconds until the token expires' },
  },
};

export const ConnectorSchema: Schema = {
  title: 'Connector',
  description: 'A connector; its credentials are never returned.',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'organization_id',
    'customer_name',
    'connector_type',
    'name',
    'auth_variant',
    'status',
    'last_checked_at',
    'last_error',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: str('Connector id (UUID)', { format: 'uuid' }),
    organization_id: str(undefined, { format: 'uuid' }),
    customer_name: str("The caller's own identifier of the customer"),
    connector_type: str('Connector type, e.g. granola, intercom, monday'),
    name: str('Name of this connector instance'),
    auth_variant: str('The credential variant in use (e.g. api_key, oauth)'),
    status: {
      type: 'string',
      enum: ['active', 'auth_failed', 'error'],
      description:
        'active: the credentials worked when last used or checked. auth_failed: the upstream refused them (401/403 during a check, execute or sync); not synced until the credentials are replaced or a check passes. error: the last check failed for another reason.',
    },
    last_checked_at: { type: ['string', 'null'], format: 'date-time', description: 'When the credential check last ran; null if never' },
    last_error: {
      description: 'The failure that set auth_failed or error; null while active',
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['code', 'message', 'at'],
          properties: { code: str('Error code'), message: str("The upstream's message"), at: str('When it happened') },
        },
        { type: 'null' },
      ],
    },
    created_at: str(undefined, { format: 'date-time' }),
    updated_at: str(undefined, { format: 'date-time' }),
  },
};

const nameField = str(undefined, { minLength: 1, maxLength: 200 });
const definitionIdField = str(
  "Airbyte's connector definition id: selects the connector type whose manifest declares it (instead of, or agreeing with, connector_type)",
  { minLength: 1, maxLength: 100 },
);

export const CreateConnectorRequestSchema: Schema = {
  title: 'CreateConnectorRequest',
  description: 'Variant A: credentials. Variant B: server_side_oauth_secret_id. Exactly one of the two.',
  type: 'object',
  additionalProperties: false,
  required: ['customer_name', 'connector_type', 'name'],
  properties: {
    customer_name: nameField,
    ...customerAliasProperties(nameField),
    connector_type: str('The type, or one of its aliases (any case), e.g. granola or "Granola"', { minLength: 1, maxLength: 100 }),
    definition_id: definitionIdField,
    name: nameField,
    replication_config: {
      type: 'object',
      description: "Accepted for Airbyte SDK compatibility and ignored: Switchboard syncs the entities the connector type's manifest declares",
    },
    credentials: { type: 'object', description: 'Credential fields of one of the connector type credential variants (see connector-types)' },
    server_side_oauth_secret_id: str('secret_id from the OAuth callback redirect', { minLength: 1, maxLength: 200 }),
  },
};

export const PatchConnectorRequestSchema: Schema = {
  title: 'PatchConnectorRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: nameField,
    credentials: { type: 'object', description: 'Replacement credentials (validated like on create)' },
  },
};

export const ListConnectorsQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customer_name: str(undefined, { minLength: 1 }),
    ...customerAliasProperties(str(undefined, { minLength: 1 })),
    connector_type: str('The type, or one of its aliases (any case)', { minLength: 1 }),
    definition_id: str("Airbyte's connector definition id: only connectors of that type (none when no type has it)", { minLength: 1 }),
    status: { type: 'string', enum: ['active', 'auth_failed', 'error'], description: 'Only connectors with this status' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    cursor: str('meta.cursor of the previous page', { minLength: 1, maxLength: 1000 }),
  },
};

export const ConnectorListSchema: Schema = {
  title: 'ConnectorList',
  type: 'object',
  additionalProperties: false,
  required: ['data', 'meta'],
  properties: {
    data: { type: 'array', items: ConnectorSchema },
    meta: {
      type: 'object',
      additionalProperties: false,
      required: ['cursor', 'has_more'],
      properties: { cursor: { type: ['string', 'null'], description: 'Pass as ?cursor= for the next page; null on the last' }, has_more: { type: 'boolean' } },
    },
  },
};

export const CheckQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    check: {
      type: 'boolean',
      default: true,
      description: "Run the connector type's credential check before storing credentials; false skips it (operators who pre-provision)",
    },
  },
};

export const CheckResponseSchema: Schema = {
  title: 'CheckResult',
  description: 'The outcome of a credential check, and the connector with the status it set.',
  type: 'object',
  additionalProperties: false,
  required: ['ok', 'checked_at', 'connector'],
  properties: {
    ok: { type: 'boolean', description: 'The upstream accepted the credentials' },
    checked_at: str(undefined, { format: 'date-time' }),
    info: { type: 'object', additionalProperties: true, description: "Facts the check reports about the account (the manifest's check.info), when ok" },
    error: {
      type: 'object',
      additionalProperties: false,
      required: ['code', 'message'],
      description: 'Why the check failed, when not ok (upstream_credentials_rejected sets auth_failed; anything else sets error)',
      properties: { code: str(), message: str(), details: { type: 'object', additionalProperties: true } },
    },
    connector: ConnectorSchema,
  },
};

export const ConnectorIdParamsSchema: Schema = {
  type: 'object',
  required: ['connector_id'],
  properties: {
    connector_id: str("Connector id; anything that is not one of this organization's connector ids (malformed ones included) is 404 connector_not_found"),
  },
};

export const ProxyParamsSchema: Schema = {
  type: 'object',
  required: ['connector_id'],
  properties: { ...(ConnectorIdParamsSchema['properties'] as Record<string, unknown>), '*': str("The path under the connector's base URL (docs/proxy.md)") },
};

export const OAuthInitiateRequestSchema: Schema = {
  title: 'OAuthInitiateRequest',
  type: 'object',
  additionalProperties: false,
  required: ['customer_name', 'connector_type', 'redirect_url'],
  properties: {
    customer_name: nameField,
    ...customerAliasProperties(nameField),
    connector_type: str('The type, or one of its aliases (any case)', { minLength: 1, maxLength: 100 }),
    definition_id: definitionIdField,
    redirect_url: str('Where the user is sent back with ?secret_id=... (or ?error=...)', { format: 'uri', maxLength: 2000 }),
    credentials: {
      type: 'object',
      description:
        'The OAuth variant\'s non-secret credential fields that its authorize/token URLs or base URL name, asked for before consent (Zendesk: {"subdomain": "acme"}); see `describe` for each field\'s pattern. Checked before anything is stored or sent (400 invalid_oauth_credentials), kept server side with the state, and stored with the tokens.',
      maxProperties: 20,
      additionalProperties: { type: 'string', maxLength: 255 },
    },
  },
};

export const OAuthInitiateResponseSchema: Schema = {
  title: 'OAuthInitiateResponse',
  type: 'object',
  additionalProperties: false,
  required: ['consent_url', 'expires_at'],
  properties: {
    consent_url: str('Send the user here', { format: 'uri' }),
    expires_at: str('The consent_url (its state) is usable until then, once', { format: 'date-time' }),
  },
};

export const OAuthCallbackQuerySchema: Schema = {
  type: 'object',
  properties: {
    state: str(),
    code: str(),
    error: str(),
    error_description: str(),
  },
};

export const ExecuteRequestSchema: Schema = {
  title: 'ExecuteRequest',
  type: 'object',
  additionalProperties: false,
  required: ['entity', 'action'],
  properties: {
    entity: str('Entity name, e.g. notes, contacts', { minLength: 1, maxLength: 100 }),
    action: str('list, get, create, update or search (also named context_store_search)', { minLength: 1, maxLength: 50 }),
    params: { type: ['object', 'null'], description: "The action's params (see connector-types for each action's JSON Schema); null or absent: no params" },
  },
};

export const ExecuteResponseSchema: Schema = {
  title: 'ExecuteResponse',
  description: 'list → {data: [records], meta}; get/create/update → {data: record}; search → {data: [records], meta: {has_more, cursor, took_ms}}',
  type: 'object',
  required: ['data'],
  properties: {
    data: { oneOf: [{ type: 'object' }, { type: 'array', items: { type: 'object' } }] },
    meta: { type: 'object' },
  },
};

const jsonSchemaObject: Schema = { type: 'object', description: 'A JSON Schema' };

export const ConnectorTypeSchema: Schema = {
  title: 'ConnectorType',
  type: 'object',
  additionalProperties: false,
  required: ['type', 'title', 'kind', 'credential_variants', 'oauth', 'list_meta_schema', 'entities'],
  properties: {
    type: str(),
    title: str(),
    kind: str(),
    description: str(),
    docs_url: str(),
    credential_variants: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'type', 'fields', 'schema'],
        properties: {
          name: str(),
          type: { type: 'string', enum: ['bearer', 'api_key', 'oauth2', 'basic', 'minted_bearer', 'client_credentials'] },
          title: str(),
          description: str(),
          fields: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'type', 'required', 'secret'],
              properties: {
                name: str(),
                type: str(),
                required: { type: 'boolean' },
                secret: { type: 'boolean' },
                multiline: { type: 'boolean', description: 'The value spans lines (a PEM key): offer a multi-line input.' },
                description: str(),
              },
            },
          },
          schema: jsonSchemaObject,
        },
      },
    },
    oauth: {
      type: ['object', 'null'],
      description: 'Service-side OAuth: null when the type has no OAuth variant',
      additionalProperties: false,
      required: ['variant', 'configured'],
      properties: {
        variant: str('The credential variant the flow produces'),
        configured: { type: 'boolean', description: 'This deployment has an OAuth app for the type' },
      },
    },
    list_meta_schema: jsonSchemaObject,
    entities: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'primary_key', 'actions'],
        properties: {
          name: str(),
          title: str(),
          description: str(),
          primary_key: str(),
          record_schema: jsonSchemaObject,
          search_fields: { type: 'object', additionalProperties: { type: 'string' }, description: 'Searchable field → search type' },
          actions: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['name', 'params_schema'],
              properties: {
                name: { type: 'string', enum: ['list', 'get', 'create', 'update', 'search'] },
                description: str(),
                params_schema: jsonSchemaObject,
              },
            },
          },
        },
      },
    },
  },
};

export const ConnectorTypeListSchema: Schema = {
  title: 'ConnectorTypeList',
  type: 'object',
  additionalProperties: false,
  required: ['data'],
  properties: { data: { type: 'array', items: ConnectorTypeSchema } },
};

export const ConnectorTypeParamsSchema: Schema = {
  type: 'object',
  required: ['connector_type'],
  properties: { connector_type: str() },
};

export const HealthSchema: Schema = {
  title: 'Health',
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: { status: { type: 'string', enum: ['ok', 'ready'] } },
};

/** Body of POST .../sync (optional). */
export const SyncRequestSchema: Schema = {
  title: 'SyncRequest',
  type: ['object', 'null'],
  additionalProperties: false,
  properties: { full: { type: 'boolean', description: 'Full refresh with deletion detection instead of an incremental run (default false)' } },
};

/** GET/POST .../sync response. */
export const SyncStatusSchema: Schema = {
  title: 'SyncStatus',
  type: 'object',
  additionalProperties: false,
  required: ['connector_id', 'status', 'last_started_at', 'last_finished_at', 'last_error', 'next_run_at', 'entities'],
  properties: {
    connector_id: str(undefined, { format: 'uuid' }),
    status: {
      type: 'string',
      enum: ['idle', 'running', 'failed', 'interrupted'],
      description: 'interrupted: the instance running it stopped mid-run (lease expired); the next run resumes from resume_from',
    },
    last_started_at: { type: ['string', 'null'], format: 'date-time' },
    last_finished_at: { type: ['string', 'null'], format: 'date-time' },
    last_error: { type: ['string', 'null'] },
    next_run_at: { type: ['string', 'null'], format: 'date-time' },
    entities: {
      type: 'object',
      description: 'Per synced entity: records stored and when its last sync finished',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['records', 'last_synced_at'],
        properties: { records: { type: 'integer' }, last_synced_at: { type: ['string', 'null'], format: 'date-time' } },
      },
    },
    resume_from: {
      type: 'object',
      description: 'Only when interrupted: the run and, per entity, where it resumes',
      additionalProperties: false,
      required: ['run_id', 'entities'],
      properties: {
        run_id: { type: 'string' },
        entities: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            required: ['done', 'records_seen', 'parent', 'params'],
            properties: {
              done: { type: 'boolean' },
              records_seen: { type: 'integer' },
              parent: { type: ['integer', 'null'] },
              params: { type: ['object', 'null'], additionalProperties: true },
            },
          },
        },
      },
    },
  },
};

/** Params of the shared search action (spec: "Shared search action"); the filter grammar belongs to src/search. */
export const SearchParamsSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['query'],
  properties: {
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        filter: {
          type: 'object',
          additionalProperties: true,
          description: '{operator: {field: value}}; operators eq, neq, gt, gte, lt, lte, in, like, fuzzy, keyword, contains, any, not, and, or',
        },
        sort: {
          type: 'array',
          items: { type: 'object', additionalProperties: { type: 'string', enum: ['asc', 'desc'] } },
          description: '[{field: "asc" | "desc"}]',
        },
      },
    },
    // No `default` keyword: openapi-typescript would make the param required in clients.
    limit: { type: 'integer', minimum: 1, description: 'Page size; default and maximum 1000' },
    cursor: { type: 'string', description: 'meta.cursor of the previous response' },
    fields: { type: 'array', items: { type: 'string' }, description: 'Field paths to include' },
  },
};
