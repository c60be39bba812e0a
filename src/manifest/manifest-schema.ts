/**
 * JSON Schema of connector manifest format v1. This object is the single definition of the
 * format: the loader validates every manifest against it, and codegen turns it into the
 * `Manifest` TypeScript types in generated/manifest.ts.
 */

import { WEBHOOKS_SCHEMA } from '../webhooks/manifest.ts';
import { PROXY_SCHEMA } from './proxy-schema.ts';

const template = { type: 'string', description: 'A Handlebars template (see README: Templates).' } as const;
const name = { type: 'string', pattern: '^[a-z][a-z0-9_]*$' } as const;

/** A JSON value tree whose string leaves are templates (request bodies, GraphQL variables). */
const templateTree = { description: 'A JSON value whose string leaves are templates; keys whose value renders undefined are dropped.' } as const;

export const MANIFEST_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://switchboard.dev/schemas/connector-manifest-v1.json',
  title: 'Manifest',
  type: 'object',
  additionalProperties: false,
  required: ['manifest_version', 'type', 'title', 'kind', 'base_url', 'auth', 'entities'],
  properties: {
    manifest_version: { const: 1 },
    type: { ...name, description: 'Connector type name, used in URLs, env vars and generated code.' },
    title: { type: 'string', minLength: 1 },
    kind: { type: 'string', minLength: 1, description: 'What kind of system this is, e.g. meeting-notes.' },
    description: { type: 'string' },
    docs_url: { type: 'string' },
    aliases: {
      type: 'array',
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
      description: 'Other names of this connector type (e.g. display names such as "Monday"); the service matches connector_type case-insensitively against the type and these.',
    },
    airbyte_definition_id: {
      type: 'string',
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
      description: "Airbyte's connector definition id (a UUID) for this system; the service accepts it as definition_id.",
    },
    logo: {
      type: 'string',
      maxLength: 16384,
      pattern: '^(https://[^\\s"<>]+|data:image/(svg\\+xml|png|jpeg|gif|webp)(;base64)?,[^\\s"<>]+)$',
      description: 'The app\'s logo, shown beside it in the Connect UI and by describe: an https:// URL or a data:image/... URI (svg+xml, png, jpeg, gif, webp), at most 16 kB.',
    },
    vendor_description: { $ref: '#/definitions/VendorDescription' },
    base_url: { $ref: '#/definitions/BaseUrl' },
    headers: { type: 'object', additionalProperties: template, description: 'Headers sent on every request (templates).' },
    config: {
      type: 'object',
      description: 'Non-secret per-connector settings, visible to templates as config.<name>.',
      additionalProperties: { $ref: '#/definitions/ConfigField' },
    },
    http: { $ref: '#/definitions/HttpSettings' },
    rate_limit: { $ref: '#/definitions/RateLimit' },
    retry: { $ref: '#/definitions/RetrySettings' },
    auth: { type: 'array', minItems: 1, items: { $ref: '#/definitions/AuthVariant' } },
    list_meta: {
      type: 'object',
      description: 'The meta fields every list action returns, by name, with their JSON Schema.',
      additionalProperties: { type: 'object', additionalProperties: true },
    },
    errors: { $ref: '#/definitions/ErrorMapping' },
    check: { $ref: '#/definitions/CredentialCheck' },
    webhooks: WEBHOOKS_SCHEMA,
    proxy: PROXY_SCHEMA,
    entities: {
      type: 'object',
      minProperties: 1,
      propertyNames: name,
      additionalProperties: { $ref: '#/definitions/Entity' },
    },
  },
  definitions: {
    VendorDescription: {
      type: 'object',
      additionalProperties: false,
      required: ['path', 'format'],
      description: "The vendor's own API description, vendored beside the manifest: what init scaffolded from, what simulate serves and what the contract test checks requests against.",
      properties: {
        path: { type: 'string', minLength: 1, pattern: '^(?!/)(?![A-Za-z]:)', description: 'File relative to the manifest directory (e.g. openapi.yaml); the loader checks it exists.' },
        format: { enum: ['openapi', 'graphql'], description: 'openapi: an OpenAPI 3.x document (JSON or YAML); graphql: a GraphQL SDL schema.' },
        source: { type: 'string', description: 'Where the description came from (URL or repository and path), to refresh it.' },
        licence: { type: 'string', description: "The description's licence, as its publisher states it." },
        trimmed_by: { type: 'string', description: 'When the file is an extract: the script (relative to the manifest directory) that made it from the source.' },
      },
    },
    BaseUrl: {
      type: 'object',
      additionalProperties: false,
      required: ['default'],
      properties: {
        default: { type: 'string', pattern: '^https?://', description: 'May hold variables, e.g. https://{{config.subdomain}}.zendesk.com: each a config or credential field declared with a pattern (see docs/manifest.md, Base URL variables).' },
        regions: {
          type: 'object',
          description: 'Named alternative base URLs (e.g. us, eu, au), chosen with the region config. May hold variables like default.',
          additionalProperties: { type: 'string', pattern: '^https?://' },
        },
      },
    },
    ConfigField: {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: {
        type: { enum: ['string', 'integer', 'number', 'boolean'] },
        default: { type: ['string', 'number', 'boolean'] },
        enum: { type: 'array', items: { type: ['string', 'number'] } },
        pattern: { type: 'string', minLength: 1, description: 'A regular expression the whole value must match (anchored); required for a variable of the base URL.' },
        description: { type: 'string' },
      },
    },
    HttpSettings: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeout_ms: { type: 'integer', minimum: 1, description: 'Per-attempt timeout; default 30000.' },
        max_response_bytes: { type: 'integer', minimum: 1, description: 'Largest response body accepted (decoded); default 52428800 (50 MiB).' },
      },
    },
    RateLimit: {
      type: 'object',
      additionalProperties: false,
      required: ['requests', 'window_ms'],
      description: 'Client-side throttle: a token bucket refilled at requests/window_ms, holding at most burst.',
      properties: {
        requests: { type: 'integer', minimum: 1 },
        window_ms: { type: 'integer', minimum: 1 },
        burst: { type: 'integer', minimum: 1, description: 'Bucket size; default requests.' },
      },
    },
    RetrySettings: {
      type: 'object',
      additionalProperties: false,
      properties: {
        max_attempts: { type: 'integer', minimum: 1, maximum: 10, description: 'Total attempts including the first; default 4.' },
        base_delay_ms: { type: 'integer', minimum: 0, description: 'First backoff delay; doubles each attempt, with full jitter; default 250.' },
        max_delay_ms: { type: 'integer', minimum: 0, description: 'Cap on any single wait, including server-requested ones; default 30000.' },
        max_retry_after_ms: { type: 'integer', minimum: 0, description: 'Longest server-requested wait (Retry-After) honoured, for retries and for holding back the connector; longer ones fail at once with retry_after; default 60000.' },
        retry_after_headers: {
          type: 'array',
          description: 'Response headers that tell when to retry, checked in order.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'format'],
            properties: {
              name: { type: 'string' },
              format: { enum: ['seconds', 'unix_seconds', 'unix_ms', 'http_date'] },
            },
          },
        },
      },
    },
    CredentialField: {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: {
        type: { enum: ['string', 'integer', 'number', 'boolean'] },
        required: { type: 'boolean', description: 'Default true.' },
        secret: { type: 'boolean', description: 'Secret fields are never logged or returned. Default false.' },
        multiline: { type: 'boolean', description: 'The value spans lines (a PEM private key): the Connect form shows a multi-line input (hidden when secret). Only for string fields. Default false.' },
        pattern: { type: 'string', minLength: 1, description: 'A regular expression the whole value must match (anchored); required for a variable of the base URL (e.g. a Zendesk subdomain).' },
        description: { type: 'string' },
      },
    },
    AuthVariant: {
      type: 'object',
      required: ['name', 'type', 'fields'],
      discriminator: { propertyName: 'type' },
      oneOf: [
        { $ref: '#/definitions/BearerAuth' },
        { $ref: '#/definitions/ApiKeyAuth' },
        { $ref: '#/definitions/OAuth2Auth' },
        { $ref: '#/definitions/BasicAuth' },
        { $ref: '#/definitions/MintedBearerAuth' },
      ],
    },
    MintedBearerAuth: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'type', 'fields', 'jwt', 'mint'],
      description:
        'A short-lived bearer token the interpreter mints itself from long-lived credentials (a GitHub App installation token): it signs a JWT with a private key credential, sends the mint request with "Authorization: Bearer <jwt>", reads the token and its expiry from the answer, keeps it in memory only (never stored, never logged), sends it as "Authorization: Bearer <token>", and mints again shortly before it expires or once after a 401.',
      properties: {
        name,
        type: { const: 'minted_bearer' },
        base_url: { type: 'string', pattern: '^https?://', description: 'The base URL while this variant is in use, instead of base_url.default. May hold variables.' },
        title: { type: 'string' },
        description: { type: 'string' },
        fields: { type: 'object', minProperties: 1, additionalProperties: { $ref: '#/definitions/CredentialField' } },
        check: { $ref: '#/definitions/CredentialCheck' },
        jwt: {
          type: 'object',
          additionalProperties: false,
          required: ['private_key', 'claims'],
          description: 'The JWT (RFC 7519) that proves the app: header {alg, typ: JWT}, the claims rendered from templates plus iat and exp.',
          properties: {
            algorithm: { enum: ['RS256'], description: 'The signature algorithm; RS256 (RSASSA-PKCS1-v1_5 with SHA-256), the default, is the only one.' },
            private_key: { ...template, description: 'The PEM private key (PKCS#1 or PKCS#8), e.g. "{{credentials.private_key}}"; every credential field it reads must be secret: true.' },
            claims: {
              type: 'object',
              minProperties: 1,
              additionalProperties: template,
              description: 'Claims rendered from templates (context: credentials, config), e.g. iss: "{{credentials.app_id}}". iat and exp are set by the interpreter and may not be given.',
            },
            backdate_seconds: { type: 'integer', minimum: 0, maximum: 300, description: 'iat is now minus this many seconds (clock drift); default 60.' },
            lifetime_seconds: { type: 'integer', minimum: 1, maximum: 3600, description: 'exp is now plus this many seconds; default 540 (GitHub refuses more than 10 minutes).' },
          },
        },
        mint: {
          type: 'object',
          additionalProperties: false,
          required: ['request', 'token'],
          description: 'The request that exchanges the JWT for the short-lived token, on the base URL, with the manifest headers and "Authorization: Bearer <jwt>".',
          properties: {
            request: { $ref: '#/definitions/Request', description: 'The request (templates may use credentials and config; there are no params).' },
            token: { ...template, description: 'The token in the answer (context: body, headers, status), e.g. "{{body.token}}".' },
            expires_at: { ...template, description: 'When the token expires (context: body, headers, status): an ISO 8601 time or Unix seconds, e.g. "{{body.expires_at}}". Without it (or expires_in) the token is kept until a 401.' },
            expires_in: { ...template, description: 'Instead of expires_at: seconds the token lives from now, e.g. "{{body.expires_in}}".' },
            renew_before_seconds: { type: 'integer', minimum: 0, description: 'Mint again this many seconds before the token expires; default 60.' },
          },
        },
      },
    },
    BasicAuth: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'type', 'fields', 'username', 'password'],
      description: 'HTTP basic authentication (RFC 7617): "Authorization: Basic base64(username:password)", both rendered from credential fields (Zendesk: "{{credentials.email}}/token" and the API token; Jira: the email and the API token).',
      properties: {
        name,
        type: { const: 'basic' },
        base_url: { type: 'string', pattern: '^https?://', description: 'The base URL while this variant is in use, instead of base_url.default (Jira: basic auth on https://{{credentials.site}}.atlassian.net, OAuth on https://api.atlassian.com/ex/jira/{{config.cloud_id}}). May hold variables.' },
        title: { type: 'string' },
        description: { type: 'string' },
        fields: { type: 'object', minProperties: 1, additionalProperties: { $ref: '#/definitions/CredentialField' } },
        check: { $ref: '#/definitions/CredentialCheck' }, // the variant's own check, instead of the manifest's (templates read its fields)
        username: { ...template, description: 'The user name (may not contain ":").' },
        password: { ...template, description: 'The password; every credential field it reads must be secret: true.' },
      },
    },
    BearerAuth: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'type', 'fields', 'token'],
      properties: {
        name,
        type: { const: 'bearer' },
        base_url: { type: 'string', pattern: '^https?://', description: 'The base URL while this variant is in use, instead of base_url.default (Jira: basic auth on https://{{credentials.site}}.atlassian.net, OAuth on https://api.atlassian.com/ex/jira/{{config.cloud_id}}). May hold variables.' },
        title: { type: 'string' },
        description: { type: 'string' },
        fields: { type: 'object', minProperties: 1, additionalProperties: { $ref: '#/definitions/CredentialField' } },
        token: { ...template, description: 'Sent as "Authorization: Bearer <token>".' },
        check: { $ref: '#/definitions/CredentialCheck' }, // the variant's own check, instead of the manifest's (templates read its fields)
      },
    },
    ApiKeyAuth: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'type', 'fields', 'header', 'value'],
      properties: {
        name,
        type: { const: 'api_key' },
        base_url: { type: 'string', pattern: '^https?://', description: 'The base URL while this variant is in use, instead of base_url.default (Jira: basic auth on https://{{credentials.site}}.atlassian.net, OAuth on https://api.atlassian.com/ex/jira/{{config.cloud_id}}). May hold variables.' },
        title: { type: 'string' },
        description: { type: 'string' },
        fields: { type: 'object', minProperties: 1, additionalProperties: { $ref: '#/definitions/CredentialField' } },
        header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' },
        value: { ...template, description: 'The header value, sent as is (e.g. a raw "Authorization: <token>").' },
        check: { $ref: '#/definitions/CredentialCheck' }, // the variant's own check, instead of the manifest's (templates read its fields)
      },
    },
    OAuth2Auth: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'type', 'fields', 'authorize_url', 'token_url'],
      properties: {
        name,
        type: { const: 'oauth2' },
        base_url: { type: 'string', pattern: '^https?://', description: 'The base URL while this variant is in use, instead of base_url.default (Jira: basic auth on https://{{credentials.site}}.atlassian.net, OAuth on https://api.atlassian.com/ex/jira/{{config.cloud_id}}). May hold variables.' },
        title: { type: 'string' },
        description: { type: 'string' },
        fields: {
          type: 'object',
          minProperties: 1,
          description: 'Must include access_token; refresh_token and expires_at (Unix seconds) when tokens refresh.',
          additionalProperties: { $ref: '#/definitions/CredentialField' },
        },
        authorize_url: { type: 'string', pattern: '^https?://' },
        token_url: { type: 'string', pattern: '^https?://' },
        scopes: { type: 'array', items: { type: 'string' } },
        scope_separator: { type: 'string', description: 'Default " ".' },
        token_request_auth: {
          enum: ['client_secret_post', 'client_secret_basic'],
          description: 'How the token request authenticates the OAuth app; default client_secret_post.',
        },
        refreshes: { type: 'boolean', description: 'Tokens come with a refresh token; default false.' },
        expires: { type: 'boolean', description: 'Access tokens expire (expires_in); default false.' },
        authorize_params: { type: 'object', additionalProperties: { type: 'string' } },
        follow_up: {
          type: 'array',
          minItems: 1,
          description:
            'Requests run once after the authorization-code exchange (hosted OAuth, Connect UI), in order, that fill non-secret credential fields from their answers (Jira: cloud_id from accessible-resources). Not run after a refresh unless on_refresh is true. Library callers that exchange codes themselves run them with runFollowUps or supply the fields.',
          items: { $ref: '#/definitions/OAuthFollowUp' },
        },
        check: { $ref: '#/definitions/CredentialCheck' }, // the variant's own check, instead of the manifest's (templates read its fields)
        apply: {
          type: 'object',
          additionalProperties: false,
          required: ['header', 'value'],
          description: 'How the access token is sent; default "Authorization: Bearer {{credentials.access_token}}".',
          properties: { header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' }, value: template },
        },
      },
    },
    OAuthFollowUp: {
      type: 'object',
      additionalProperties: false,
      required: ['request', 'fields'],
      properties: {
        request: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            method: { enum: ['GET', 'POST'], description: 'Default GET; a POST sends no body.' },
            url: { type: 'string', pattern: '^https://', description: "Absolute https URL, no variables; its host must be the host of the variant's authorize_url, token_url or a base URL of the manifest." },
            headers: { type: 'object', additionalProperties: template, description: 'Header templates over credentials (the new tokens) and config, e.g. Authorization: "Bearer {{credentials.access_token}}".' },
          },
        },
        fields: {
          type: 'object',
          minProperties: 1,
          description: 'Credential field → template over the answer (body, headers), e.g. cloud_id: "{{body.0.id}}". Each must be a non-secret field of the variant; an empty answer fails with oauth_nothing_granted.',
          additionalProperties: template,
        },
        missing: { type: 'string', description: 'The message of oauth_nothing_granted when a field renders empty (Jira: the user granted no site).' },
        on_refresh: { type: 'boolean', description: 'Run again after every token refresh; default false.' },
      },
    },
    ErrorMapping: {
      type: 'object',
      additionalProperties: false,
      properties: {
        message: { ...template, description: "Where the upstream's own error message is in an error body (context: body, headers, status)." },
        in_body: {
          type: 'array',
          description: 'Errors reported inside a 2xx body (GraphQL). The first rule that matches applies.',
          items: { $ref: '#/definitions/BodyErrorRule' },
        },
        on_status: {
          type: 'array',
          description: 'Rules for non-2xx responses, checked before the default status mapping (401/403, 404, 429, 5xx, other 4xx). The first rule that matches applies.',
          items: { $ref: '#/definitions/BodyErrorRule' },
        },
        list: {
          type: 'object',
          additionalProperties: false,
          required: ['items'],
          description: "Every error entry of an error body, reported in the error's errors[] as {path, message}.",
          properties: {
            items: { ...template, description: 'Where the entries are (context: body, headers, status), e.g. "{{body.errors}}".' },
            path: { ...template, description: 'Path of one entry (context: entry); default "/".' },
            message: { ...template, description: 'Message of one entry (context: entry); default entry.message, or the entry itself when it is a string.' },
          },
        },
      },
    },
    BodyErrorRule: {
      type: 'object',
      additionalProperties: false,
      required: ['code'],
      properties: {
        when: { ...template, description: 'A template; the rule applies when it is truthy. Use either when or match.' },
        match: {
          type: 'object',
          additionalProperties: false,
          required: ['path', 'in'],
          description: 'A table lookup: the rule applies when the value at path is one of `in`. In message and retry_after_seconds, `matched` is the array element the first * stood for.',
          properties: {
            path: { type: 'string', pattern: '^(body|headers|status)(\\.([A-Za-z0-9_-]+|\\*))*$', description: 'Dotted path from body, headers or status; * stands for any element of an array, e.g. body.errors.*.extensions.code.' },
            in: { type: 'array', minItems: 1, items: { type: ['string', 'number', 'boolean'] }, description: 'The values that match.' },
          },
        },
        code: { enum: ['upstream_rate_limited', 'upstream_credentials_rejected', 'upstream_not_found', 'upstream_rejected', 'upstream_unavailable', 'upstream_error'] },
        message: template,
        retry_after_seconds: { ...template, description: 'For upstream_rate_limited: seconds until the budget resets.' },
        not_executed: {
          type: 'boolean',
          description: 'The upstream did not run the request (a limit refused it before execution), so it is retried like a list even for create and update; default false.',
        },
        status: { type: 'array', items: { type: 'integer', minimum: 100, maximum: 599 }, description: 'Only for responses with one of these HTTP statuses.' },
      },
    },
    CredentialCheck: {
      type: 'object',
      additionalProperties: false,
      required: ['request'],
      description: 'How to prove that credentials work: one cheap request, run on hosted create, by the check endpoint, `switchboard check` and connect().check().',
      properties: {
        description: { type: 'string' },
        request: { $ref: '#/definitions/Request', description: 'The request (templates may use credentials and config; there are no params).' },
        success: { ...template, description: 'Truthy when the 2xx answer proves the credentials (context: body, headers, status); default any 2xx. Falsy counts as upstream_credentials_rejected.' },
        info: {
          type: 'object',
          additionalProperties: template,
          description: 'Facts about the account reported by a passing check (context: body, headers, status), e.g. the workspace id or region.',
        },
      },
    },
    Param: {
      type: 'object',
      description: 'A JSON Schema for one param, plus `required` (boolean, default false).',
      required: ['type'],
      additionalProperties: true,
      properties: {
        required: { type: 'boolean' },
        type: {},
        description: { type: 'string' },
      },
    },
    Entity: {
      type: 'object',
      additionalProperties: false,
      required: ['primary_key', 'record', 'actions'],
      properties: {
        title: { type: 'string' },
        description: { type: 'string' },
        primary_key: { type: 'string' },
        record: { type: 'object', additionalProperties: true, description: 'JSON Schema of a record.' },
        actions: {
          type: 'object',
          minProperties: 1,
          propertyNames: { enum: ['list', 'get', 'create', 'update', 'changes', 'scroll'] },
          description: 'list, get, create and update are exposed through execute; changes (the records changed since a point, see sync.incremental.action) and scroll (every record, for full syncs, see sync.action) are sync-only lists.',
          additionalProperties: { $ref: '#/definitions/Action' },
        },
        sync: { $ref: '#/definitions/Sync' },
        search: { $ref: '#/definitions/Search' },
      },
    },
    Action: {
      type: 'object',
      additionalProperties: false,
      required: ['request', 'response'],
      properties: {
        description: { type: 'string' },
        params: { type: 'object', propertyNames: name, additionalProperties: { $ref: '#/definitions/Param' } },
        requires_any: {
          type: 'array',
          minItems: 1,
          items: { type: 'array', minItems: 2, uniqueItems: true, items: name },
          description:
            'Groups of params of which at least one must be given (e.g. [[body, state]] when the request branches on them): checked with the params, before any request is sent (invalid_params naming the group). Each name must be a declared param.',
        },
        request: { $ref: '#/definitions/Request' },
        response: { $ref: '#/definitions/Response' },
        pagination: { $ref: '#/definitions/Pagination' },
        retry_safe: { type: 'boolean', description: 'May be retried after a failure; default true for list/get, false for create/update.' },
      },
    },
    Request: {
      type: 'object',
      additionalProperties: false,
      required: ['method', 'path'],
      properties: {
        method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] },
        path: { ...template, description: 'Path template; every expression is URL-encoded as one segment.' },
        query: { type: 'object', additionalProperties: template },
        headers: { type: 'object', additionalProperties: template },
        body: templateTree,
        body_encoding: {
          enum: ['json', 'form'],
          description:
            'How body is sent: json (default, application/json) or form (application/x-www-form-urlencoded, nested keys as Stripe reads them: metadata[plan]=pro, expand[]=customer, items[0][price]=p1). A form body must render an object.',
        },
        graphql: {
          type: 'object',
          additionalProperties: false,
          required: ['query'],
          description: 'Send {query, variables} as a JSON POST body.',
          properties: { query: template, variables: templateTree },
        },
      },
    },
    Response: {
      type: 'object',
      additionalProperties: false,
      properties: {
        records: { ...template, description: 'list: where the array of records is (context: body, headers, params).' },
        record: { ...template, description: 'get/create/update: where the record is.' },
        meta: { type: 'object', additionalProperties: template, description: 'list: one template per list_meta field.' },
        not_found_when: { ...template, description: 'get: a 2xx body that means "no such record" (GraphQL APIs answer an empty list).' },
        on_empty: {
          type: 'object',
          additionalProperties: false,
          required: ['action'],
          description:
            'create/update (any action that answers one record): what a 2xx answer without a body (204 No Content, or an empty 200) means. The record is read back with another action of the same entity (usually get), its params rendered from this call (context: params, headers, status), and that action\'s answer is the result. Without on_empty, an empty answer is upstream_protocol_error.',
          properties: {
            action: { type: 'string', description: 'The action of this entity that reads the record back (get); not a list action, not this one.' },
            params: { type: 'object', additionalProperties: template, description: "That action's params: name → template over this call (e.g. issue_id_or_key: \"{{params.issue_id_or_key}}\", or an id from a Location header)." },
          },
        },
        map: {
          type: 'object',
          additionalProperties: template,
          description: 'Per-record field templates (context: record, params), applied to every returned record; a field rendering undefined becomes null.',
        },
      },
    },
    Pagination: {
      type: 'object',
      required: ['type'],
      discriminator: { propertyName: 'type' },
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'param', 'next'],
          properties: {
            type: { enum: ['cursor', 'graphql_cursor'] },
            param: { type: 'string', description: 'The param that carries the cursor into the next request.' },
            next: { ...template, description: 'The next cursor; empty, null or undefined ends the iteration.' },
            has_more: { ...template, description: 'Optional; false ends the iteration.' },
          },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'param'],
          properties: {
            type: { const: 'page' },
            param: { type: 'string' },
            start: { type: 'integer', description: 'First page number; default 1.' },
            has_more: { ...template, description: 'Optional; false ends. Without it, an empty page ends.' },
            limit_param: { type: 'string', description: 'Optional: the page-size param; a page with fewer records than the page size ends.' },
            default_limit: { type: 'integer', minimum: 1, description: 'With limit_param: the page size the request sends when the param is absent.' },
          },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'param', 'limit_param'],
          properties: {
            type: { const: 'offset' },
            param: { type: 'string' },
            limit_param: { type: 'string' },
            default_limit: { type: 'integer', minimum: 1 },
          },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['type'],
          properties: { type: { const: 'link_header' } },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'next'],
          description: 'Follow the URL of the next page given in the body (Zendesk links.next, HubSpot paging.next.link); only on the base URL\'s origin.',
          properties: {
            type: { const: 'next_url' },
            next: { ...template, description: 'The next page\'s URL (absolute, or relative to the base URL); empty, null or undefined ends the iteration.' },
            has_more: { ...template, description: 'Optional; false ends the iteration.' },
          },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['type', 'param', 'next'],
          description: 'A server-side scroll: the same token (next) continues it page after page, and an empty page ends it.',
          properties: {
            type: { const: 'scroll' },
            param: { type: 'string', description: 'The param that carries the scroll token into the next request.' },
            next: { ...template, description: 'The scroll token of this page.' },
          },
        },
      ],
    },
    Sync: {
      type: 'object',
      additionalProperties: false,
      properties: {
        action: { enum: ['list', 'scroll'], description: 'The list action a full sync pages through; default list. scroll is a sync-only action (e.g. a scroll API that reaches past the list\'s page limit).' },
        params: { type: 'object', additionalProperties: true, description: 'Fixed params for the sync list (e.g. the largest page size).' },
        incremental: {
          type: 'object',
          additionalProperties: false,
          required: ['cursor_field'],
          properties: {
            mode: {
              enum: ['param', 'sorted'],
              description: 'param (default): a list param asks for changes since the last run. sorted: the sync params sort newest change first, and paging stops at the first record older than the last run.',
            },
            param: { type: 'string', description: 'mode param: the list param that asks for records changed since a point.' },
            cursor_field: { type: 'string', description: 'Record field holding the change time.' },
            format: {
              enum: ['iso8601', 'date', 'unix_seconds', 'unix_ms', 'raw'],
              description: "How the param value is written; default iso8601. raw: the cursor field's value as the upstream gave it (Slack's message ts for oldest).",
            },
            params: { type: 'object', additionalProperties: true, description: 'Fixed params of the changes action (sync.params are those of the full sync action).' },
            action: {
              enum: ['list', 'changes'],
              description: 'mode param: the action incremental runs page through; default list. changes is a sync-only action (e.g. a search endpoint filtered on the change time); full refreshes still use list.',
            },
          },
        },
        hydrate: {
          type: 'object',
          additionalProperties: false,
          required: ['action', 'params'],
          description: 'Fetch each listed record again through get (context: record).',
          properties: { action: { const: 'get' }, params: { type: 'object', additionalProperties: template } },
        },
        deletes: { enum: ['full_refresh', 'none'], description: 'How records deleted upstream are detected; default full_refresh.' },
        deleted_when: {
          ...template,
          description:
            "Records the sync's own pages report as deleted (context: record), e.g. an export that keeps deleted records with a status (Zendesk: \"{{eq record.status 'deleted'}}\"): they are deleted from search instead of stored, in full and incremental runs.",
        },
        removals: {
          type: 'object',
          additionalProperties: false,
          required: ['entity', 'id'],
          description:
            'Incremental runs: records removed upstream since the last run (deleted, archived), read from another list such as an activity log and deleted from search. With for_each, that list is read once per parent, with the same param.',
          properties: {
            entity: { type: 'string', description: 'The entity whose list reports removals (e.g. activity_logs).' },
            params: { type: 'object', additionalProperties: true, description: 'Fixed params of that list.' },
            since_param: {
              type: 'string',
              description: "That list's param set to the last run's high-water mark (incremental.cursor_field). Without it the list is read whole on every incremental run (e.g. HubSpot's archived=true listing, which takes no time filter).",
            },
            format: { enum: ['iso8601', 'date', 'unix_seconds', 'unix_ms', 'raw'], description: 'How since_param is written; default iso8601.' },
            when: { ...template, description: 'Which entries are removals (context: record); default every entry.' },
            id: { ...template, description: "The removed record's primary key (context: record)." },
          },
        },
        for_each: {
          type: 'object',
          additionalProperties: false,
          required: ['entity', 'param', 'value'],
          description: "Sync this entity once per record of a parent entity's list (e.g. items per board).",
          properties: {
            entity: { type: 'string', description: 'Parent entity (its list action is paged through).' },
            param: { type: 'string', description: "This entity's list param that takes the parent." },
            value: { ...template, description: 'The param value (context: record, the parent record).' },
            also: {
              type: 'object',
              additionalProperties: template,
              description: "Other params of this entity's list set from the same parent record (context: record), when a parent is named by several (GitHub: owner and repo).",
            },
            params: { type: 'object', additionalProperties: true, description: 'Fixed params of the parent list.' },
          },
        },
      },
    },
    Search: {
      type: 'object',
      additionalProperties: false,
      required: ['fields'],
      properties: {
        fields: {
          type: 'object',
          minProperties: 1,
          additionalProperties: { enum: ['string', 'integer', 'number', 'boolean', 'object', 'array'] },
          description: 'Searchable fields and their search types (may differ from the record type).',
        },
        sources: {
          type: 'object',
          additionalProperties: { type: 'string' },
          description: 'Record path a search field is read from, when it is not the field of the same name.',
        },
      },
    },
  },
} as const;
