/** The JSON Schema a sidecar is checked against (load.ts); the shapes it admits are types.ts's. */
import { OPERATOR_MEANINGS } from '../rules.ts';

const fieldOrFields = {
  anyOf: [
    { type: 'string', minLength: 1 },
    { type: 'array', items: { type: 'string', minLength: 1 } },
  ],
} as const;

/** A filters entry; `contains`, `equals_ignore_case`, `values` and `default` only for GraphQL lists (graphql.lists.*.filters). */
const filterEntry = (matches: string[], more: Record<string, unknown> = {}) =>
  ({
    type: 'object',
    additionalProperties: false,
    properties: { field: { type: 'string', minLength: 1 }, match: { enum: matches }, any: { type: 'array', items: { type: 'string' } }, ...more },
  }) as const;
const conditions = { type: 'object', minProperties: 1 } as const;
const MATCHES = ['equals', 'since', 'before', 'after', 'until'];

const typeField = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$' } as const;

const override = {
  type: 'object',
  additionalProperties: false,
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' } },
} as const;

/** An operation ("GET /conversations.list"), or several. */
const operationKey = { type: 'string', pattern: '^(GET|PUT|POST|DELETE|PATCH) /' } as const;
const operations = { anyOf: [operationKey, { type: 'array', minItems: 1, items: operationKey }] } as const;

export const SIDECAR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  definitions: {
    pagination: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cursor_param: { type: 'string' },
        limit_param: { type: 'string' },
        default_limit: { type: 'integer', minimum: 1 },
        max_limit: { type: 'integer', minimum: 1 },
        next_cursor: { type: 'string' },
        last_cursor: { type: ['string', 'null'] },
        cursor_at_end: { type: 'boolean' },
        next_url: { type: 'string' },
        has_more: { type: 'string' },
        done: { type: 'string' },
        order: { enum: ['stored', 'newest_first', 'id_ascending', 'id_descending'] },
      },
    },
  },
  properties: {
    response_headers: { type: 'object', additionalProperties: { type: 'string' } },
    error: {
      type: 'object',
      additionalProperties: false,
      properties: {
        body: {},
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        codes: { type: 'object', additionalProperties: { type: 'string' } },
        status: { type: 'object', additionalProperties: { type: 'integer', minimum: 200, maximum: 599 } },
      },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        tokens: { type: 'array', items: { type: 'string', minLength: 1 } },
        message: { type: 'string' },
        header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' },
        params: { type: 'array', items: { type: 'string', minLength: 1 } },
        bearer: { type: 'boolean' },
        basic_user: { type: 'boolean' },
      },
    },
    not_found: { type: 'object', additionalProperties: override },
    parameters: { type: 'object', additionalProperties: override },
    operations: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          bad_request: override,
          pagination: { $ref: '#/definitions/pagination' },
          since: {
            type: 'object',
            additionalProperties: false,
            required: ['param', 'field'],
            properties: { param: { type: 'string' }, field: { type: 'string' } },
          },
          no_content_unless: { type: 'string', minLength: 1 },
          example: { type: 'object' },
          item: { type: 'object' },
          collections: { type: 'object', additionalProperties: { type: 'string' } },
          empty: {
            type: 'object',
            additionalProperties: false,
            required: ['status'],
            properties: {
              status: { type: 'integer', minimum: 200, maximum: 399 },
              when_filtered: { type: 'object', additionalProperties: { type: 'integer', minimum: 200, maximum: 399 } },
            },
          },
        },
      },
    },
    oauth: {
      type: 'object',
      additionalProperties: false,
      required: ['authorize_path', 'token_path'],
      properties: {
        authorize_path: { type: 'string', pattern: '^/' },
        token_path: { type: 'string', pattern: '^/' },
        token_response: { type: 'object' },
        deny_description: { type: 'boolean' },
        default_scope: { type: 'string' },
        callback_params: { type: 'object', additionalProperties: { type: 'string' } },
        token_prefix: { type: 'string' },
        expires_in: { type: 'integer', minimum: 1 },
        refresh_tokens: { type: 'boolean' },
        keep_refresh_token: { type: 'boolean' },
        pkce: { type: 'boolean' },
        grant_types: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z0-9_.:/-]+$' } },
        endpoints: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['path', 'json'],
            properties: { path: { type: 'string', pattern: '^/' }, method: { enum: ['GET', 'POST'] }, json: {} },
          },
        },
      },
    },
    base_path: { type: 'string', pattern: '^/[^?#]*[^/?#]$' },
    jwt_tokens: {
      type: 'object',
      additionalProperties: false,
      anyOf: [{ required: ['operation'] }, { required: ['path'] }],
      properties: {
        operation: { type: 'string', pattern: '^[A-Z]+ /' },
        path: { type: 'string', pattern: '^/' },
        public_keys: { type: 'object', additionalProperties: { type: 'string', pattern: '-----BEGIN (RSA )?PUBLIC KEY-----' } },
        fingerprints: { type: 'array', items: { type: 'string', minLength: 1 } },
        max_lifetime_seconds: { type: 'integer', minimum: 1 },
        ttl_seconds: { type: 'integer', minimum: 1 },
        token_prefix: { type: 'string' },
        response: { type: 'object' },
        status: { type: 'integer', minimum: 200, maximum: 299 },
      },
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      required: ['limit', 'window_seconds'],
      properties: {
        limit: { type: 'integer', minimum: 1 },
        window_seconds: { type: 'number', exclusiveMinimum: 0 },
        headers: {
          type: 'object',
          additionalProperties: false,
          properties: { limit: { type: 'string' }, remaining: { type: 'string' }, reset: { type: 'string' }, window_ms: { type: 'string' } },
        },
        reset: { enum: ['unix', 'unix_ms', 'seconds'] },
        exceeded_headers: { type: 'object', additionalProperties: { type: 'string' } },
        sliding: { type: 'boolean' },
        bucket: { type: 'boolean' },
        per_credential: { type: 'boolean' },
      },
    },
    pagination: { $ref: '#/definitions/pagination' },
    records: { type: 'integer', minimum: 0, maximum: 10_000 },
    resources: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          id_field: { type: 'string' },
          id_like: { type: ['string', 'integer'] },
          records: { type: 'integer', minimum: 0, maximum: 10_000 },
          key: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
          template: { type: 'object' },
          fields: {
            type: 'object',
            additionalProperties: {
              oneOf: [
                { type: 'object', additionalProperties: false, required: ['pool'], properties: { pool: { type: 'string' } } },
                { type: 'object', additionalProperties: false, required: ['one_of'], properties: { one_of: { type: 'array', minItems: 1 } } },
                { type: 'object', additionalProperties: false, required: ['ids_of'], properties: { ids_of: { type: 'string' } } },
              ],
            },
          },
          lookup: { type: 'array', items: { type: 'string', minLength: 1 } },
          aliases: { type: 'object', additionalProperties: { type: 'integer', minimum: 1 } },
          lists: { type: 'array', items: { type: 'string', pattern: '^(GET|POST) /' } },
          get: {
            anyOf: [
              {
                type: 'object',
                additionalProperties: false,
                required: ['operation'],
                properties: { operation: { type: 'string', pattern: '^GET /' }, id_query: { type: 'string', minLength: 1 } },
              },
              operationKey,
              { type: 'array', minItems: 1, items: operationKey },
            ],
          },
          timestamps: {
            type: 'object',
            additionalProperties: false,
            properties: {
              created: fieldOrFields,
              updated: fieldOrFields,
              step_seconds: { type: 'integer', minimum: 1 },
              unix: { enum: [true, false, 'ms_text'] },
              unix_ms: { type: 'boolean' },
            },
          },
          unique: {
            type: 'object',
            additionalProperties: false,
            required: ['fields'],
            properties: { fields: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }, message: { type: 'string' } },
          },
          upsert: { type: 'string', minLength: 1 },
          include: {
            type: 'object',
            additionalProperties: false,
            required: ['param', 'fields'],
            properties: { param: { type: 'string', minLength: 1 }, fields: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } },
          },
          ...Object.fromEntries(['list', 'create', 'update', 'delete'].map((a) => [a, operations])),
          id_param: { oneOf: [{ type: 'string' }, { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }] },
          record: { type: 'string' },
          parent: {
            type: 'object',
            additionalProperties: false,
            required: ['param', 'resource'],
            properties: {
              param: { type: 'string' },
              resource: { type: 'string' },
              append: {
                type: 'object',
                additionalProperties: false,
                required: ['to', 'item'],
                properties: { to: { type: 'string', minLength: 1 }, item: {}, count: { type: 'string', minLength: 1 } },
              },
            },
          },
          writes: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
          soft_delete: {
            type: 'object',
            additionalProperties: false,
            required: ['field'],
            properties: {
              field: { type: 'string' },
              value: { type: ['string', 'number', 'boolean', 'null'] },
              at: { type: 'string' },
              param: { type: 'string' },
            },
          },
          text_values: { type: 'array', items: { type: 'string', minLength: 1 } },
          written_as_sent: { type: 'array', items: { type: 'string', minLength: 1 } },
          created_answer: {},
          updated_answer: {},
          created_by: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['operation', 'field'],
              properties: { operation: { type: 'string', pattern: '^[A-Z]+ /' }, field: { type: 'string' }, echo: { type: 'string' } },
            },
          },
          seed: { anyOf: [{ type: 'object' }, { type: 'array', minItems: 1, items: { type: 'object' } }] },
        },
      },
    },
    filters: { type: 'object', additionalProperties: filterEntry(MATCHES) },
    search: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'operators', 'response'],
        properties: {
          resource: { type: 'string' },
          query: { type: 'string' },
          unfiltered: { type: 'boolean' },
          path_fields: { type: 'object', additionalProperties: { type: 'string' } },
          filter_groups: {
            type: 'object',
            additionalProperties: false,
            required: ['groups', 'filters'],
            properties: { groups: { type: 'string' }, filters: { type: 'string' } },
          },
          fields_at: { type: 'string' },
          text: { type: 'string' },
          keys: {
            type: 'object',
            additionalProperties: false,
            properties: {
              field: { type: 'string' },
              operator: { type: 'string' },
              value: { type: 'string' },
              values: { type: 'string' },
              high_value: { type: 'string' },
            },
          },
          groups: { type: 'object', additionalProperties: { enum: ['all', 'any'] } },
          operators: { type: 'object', minProperties: 1, additionalProperties: { enum: OPERATOR_MEANINGS } },
          allowed: {
            type: 'object',
            additionalProperties: false,
            properties: Object.fromEntries(['string', 'number', 'boolean', 'date'].map((t) => [t, { type: 'array', items: { type: 'string' } }])),
          },
          date_fields: { type: 'string' },
          sort: {
            type: 'object',
            additionalProperties: false,
            required: ['field'],
            properties: {
              field: { type: 'string' },
              order: { type: 'string' },
              descending: { type: 'array', items: { type: 'string' } },
              list: { type: 'string' },
            },
          },
          pagination: {
            type: 'object',
            additionalProperties: false,
            properties: {
              per_page: { type: 'string' },
              cursor: { type: 'string' },
              page: { type: 'string' },
              default: { type: 'integer', minimum: 1 },
              max: { type: 'integer', minimum: 1 },
              over_max: { enum: ['reject', 'clamp'] },
            },
          },
          response: {},
        },
      },
    },
    scroll: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'param', 'page_size', 'idle_seconds', 'busy', 'expired', 'response'],
        properties: {
          resource: { type: 'string' },
          param: { type: 'string' },
          page_size: { type: 'integer', minimum: 1 },
          idle_seconds: { type: 'number', exclusiveMinimum: 0 },
          busy: override,
          expired: override,
          response: {},
        },
      },
    },
    changed: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['names', 'since', 'resources', 'field', 'group', 'response'],
        properties: {
          names: { type: 'string' },
          since: { type: 'string' },
          resources: { type: 'object', additionalProperties: { type: 'string' } },
          field: { type: 'string' },
          group: {},
          response: {},
        },
      },
    },
    deletions: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'field', 'item', 'response'],
        properties: { resource: { type: 'string' }, field: { type: 'string' }, since: { type: 'string' }, until: { type: 'string' }, item: {}, response: {} },
      },
    },
    query: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['param', 'resources', 'page_size', 'response'],
        properties: {
          param: { type: 'string' },
          resources: { type: 'object', additionalProperties: { type: 'string' } },
          page_size: { type: 'integer', minimum: 1 },
          max_page_size: { type: 'integer', minimum: 1 },
          size_header: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'pattern'],
            properties: { name: { type: 'string' }, pattern: { type: 'string' }, min: { type: 'integer', minimum: 1 } },
          },
          next: {
            type: 'object',
            additionalProperties: false,
            required: ['operation', 'param'],
            properties: { operation: { type: 'string' }, param: { type: 'string' } },
          },
          keep: { type: 'array', items: { type: 'string' } },
          response: {},
        },
      },
    },
    pages: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'response'],
        properties: {
          resource: { type: 'string' },
          order: { enum: ['stored', 'newest_first'] },
          per_page: { type: 'string' },
          cursor: { type: 'string' },
          default: { type: 'integer', minimum: 1 },
          page: { type: 'string' },
          first_page: { enum: [0, 1] },
          max_offset: {
            type: 'object',
            additionalProperties: false,
            required: ['limit', 'code', 'message'],
            properties: { limit: { type: 'integer', minimum: 1 }, code: { type: 'string' }, message: { type: 'string' } },
          },
          reverse: {
            type: 'object',
            additionalProperties: false,
            required: ['param', 'value'],
            properties: { param: { type: 'string' }, value: { type: 'string' } },
          },
          cursor_form: {
            anyOf: [
              { type: 'array', minItems: 1 },
              { type: 'string', pattern: '^\\{\\{last\\.[A-Za-z0-9_]+\\}\\}$' },
            ],
          },
          id_field: { type: 'string' },
          path_fields: {
            type: 'object',
            additionalProperties: {
              anyOf: [
                { type: 'string' },
                {
                  type: 'object',
                  additionalProperties: false,
                  required: ['field'],
                  properties: { field: { type: 'string' }, match: { enum: ['equals', 'contains'] } },
                },
              ],
            },
          },
          filters: { type: 'object', additionalProperties: filterEntry(MATCHES) },
          response: {},
        },
      },
    },
    pools: { type: 'object', additionalProperties: { type: 'array', minItems: 1 } },
    unknown_query: { enum: ['reject', 'ignore'] },
    graphql: {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string', pattern: '^/' },
        status: { type: 'object', additionalProperties: { type: 'integer', minimum: 200, maximum: 599 } },
        error: { type: 'object' },
        messages: { type: 'object', additionalProperties: { type: 'string' } },
        filters: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$' } },
        filter_argument: { type: 'string' },
        order_by: { type: 'object', additionalProperties: false, properties: { argument: { type: 'string' }, direction: { enum: ['asc', 'desc'] } } },
        archived: { type: 'object', additionalProperties: false, properties: { field: { type: 'string' }, argument: { type: 'string' } } },
        dialect: { enum: ['graphql-js', 'graphql-ruby'] },
        missing: { enum: ['error', 'null'] },
        id_template: { type: 'string', pattern: '\\{\\{number\\}\\}' },
        errors: { type: 'object', additionalProperties: { type: 'object' } },
        envelope: { type: 'object' },
        versions: {
          type: 'object',
          additionalProperties: false,
          required: ['header', 'served', 'default'],
          properties: {
            header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' },
            served: { type: 'object', additionalProperties: { type: 'string' } },
            default: { type: 'string' },
          },
        },
        fields: { type: 'object', propertyNames: typeField },
        lists: {
          type: 'object',
          propertyNames: typeField,
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            properties: {
              back: { type: 'string', minLength: 1 },
              order: { enum: ['stored', 'newest_first'] },
              where: { type: 'object' },
              lookup: { type: 'array', items: { type: 'string' } },
              filters: {
                type: 'object',
                additionalProperties: filterEntry([...MATCHES, 'contains', 'equals_ignore_case'], {
                  values: { type: 'object', additionalProperties: conditions },
                  default: conditions,
                }),
              },
              sort: {
                type: 'object',
                additionalProperties: { type: 'object', additionalProperties: { type: 'string', pattern: '^-?[A-Za-z_][A-Za-z0-9_.]*$' } },
              },
            },
          },
        },
        types: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            required: ['field', 'values'],
            properties: { field: { type: 'string' }, values: { type: 'object', additionalProperties: { type: 'string' } }, default: { type: 'string' } },
          },
        },
        cursor_pages: {
          type: 'object',
          additionalProperties: false,
          properties: {
            next: { type: 'string' },
            ttl_seconds: { type: 'number', exclusiveMinimum: 0 },
            max_limit: { type: 'integer', minimum: 1 },
            skip: {
              type: 'object',
              additionalProperties: false,
              required: ['field', 'values'],
              properties: { field: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } },
            },
          },
        },
        complexity: {
          type: 'object',
          additionalProperties: false,
          required: ['budget', 'window_seconds'],
          properties: {
            budget: { type: 'integer', minimum: 1 },
            window_seconds: { type: 'number', exclusiveMinimum: 0 },
            max_query: { type: 'integer', minimum: 1 },
            list_size: { type: 'integer', minimum: 0 },
            sizes: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
            status: { type: 'integer', minimum: 200, maximum: 599 },
            headers: { type: 'object', additionalProperties: { type: 'string' } },
            messages: { type: 'object', additionalProperties: false, properties: { exhausted: { type: 'string' }, too_complex: { type: 'string' } } },
          },
        },
      },
    },
    sandbox: {
      type: 'object',
      additionalProperties: false,
      properties: { credentials: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } } },
    },
  },
} as const;
