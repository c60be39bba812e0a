#!/usr/bin/env node
// Writes our own OpenAPI 3.0 description of the part of Calendly's API v2 the connector uses,
// derived from Calendly's API reference (https://developer.calendly.com/api-docs): Calendly
// publishes no machine-readable description on npm, and no official client there either (its
// reference's downloadable spec is not redistributable here). Labelled as ours in info and in
// every operation (x-derived-by). Run with no arguments:
//
//   node connectors/calendly/derive.mjs > connectors/calendly/openapi.json
//
// What it models: resources named by URIs (`https://api.calendly.com/users/<uuid>`), every list
// scoped by an `organization` or `user` URI, `count` (1..100) and `page_token` pages answered in
// `pagination.next_page_token`, single records in `resource`, collections in `collection`, and
// Calendly's error body {title, message, details: [{parameter, message}]}.
const DERIVED = 'connectors/calendly/derive.mjs';
const URI = (kind) => ({ type: 'string', format: 'uri', example: `https://api.calendly.com/${kind}/AAAAAAAAAAAAAAAA` });
const time = { type: 'string', format: 'date-time' };
const nullable = (s) => ({ ...s, nullable: true });

const schemas = {
  User: {
    type: 'object',
    required: ['uri', 'name', 'email'],
    properties: {
      uri: URI('users'),
      name: { type: 'string' },
      slug: { type: 'string' },
      email: { type: 'string', format: 'email' },
      scheduling_url: { type: 'string', format: 'uri' },
      timezone: { type: 'string' },
      avatar_url: nullable({ type: 'string', format: 'uri' }),
      created_at: time,
      updated_at: time,
      current_organization: URI('organizations'),
      resource_type: { type: 'string', enum: ['User'] },
      locale: { type: 'string' },
    },
  },
  OrganizationMembership: {
    type: 'object',
    required: ['uri', 'role', 'user', 'organization'],
    properties: {
      uri: URI('organization_memberships'),
      role: { type: 'string', enum: ['user', 'admin', 'owner'] },
      user: { $ref: '#/components/schemas/User' },
      organization: URI('organizations'),
      updated_at: time,
      created_at: time,
    },
  },
  EventType: {
    type: 'object',
    required: ['uri', 'name', 'active', 'slug', 'scheduling_url', 'duration', 'kind', 'type', 'profile'],
    properties: {
      uri: URI('event_types'),
      name: nullable({ type: 'string' }),
      active: { type: 'boolean' },
      slug: nullable({ type: 'string' }),
      scheduling_url: { type: 'string', format: 'uri' },
      duration: { type: 'integer' },
      kind: { type: 'string', enum: ['solo', 'group'] },
      pooling_type: nullable({ type: 'string', enum: ['round_robin', 'collective', 'multi_pool'] }),
      type: { type: 'string', enum: ['StandardEventType', 'AdhocEventType'] },
      color: { type: 'string' },
      created_at: time,
      updated_at: time,
      internal_note: nullable({ type: 'string' }),
      description_plain: nullable({ type: 'string' }),
      secret: { type: 'boolean' },
      admin_managed: { type: 'boolean' },
      profile: nullable({
        type: 'object',
        properties: { type: { type: 'string', enum: ['User', 'Team'] }, name: { type: 'string' }, owner: { type: 'string', format: 'uri' } },
      }),
    },
  },
  ScheduledEvent: {
    type: 'object',
    required: ['uri', 'name', 'status', 'start_time', 'end_time', 'event_type', 'created_at', 'updated_at'],
    properties: {
      uri: URI('scheduled_events'),
      name: nullable({ type: 'string' }),
      meeting_notes_plain: nullable({ type: 'string' }),
      status: { type: 'string', enum: ['active', 'canceled'] },
      start_time: time,
      end_time: time,
      event_type: URI('event_types'),
      location: nullable({ type: 'object', properties: { type: { type: 'string' }, location: nullable({ type: 'string' }), join_url: { type: 'string' } } }),
      invitees_counter: { type: 'object', properties: { total: { type: 'integer' }, active: { type: 'integer' }, limit: { type: 'integer' } } },
      created_at: time,
      updated_at: time,
      event_memberships: {
        type: 'array',
        items: { type: 'object', properties: { user: URI('users'), user_email: { type: 'string' }, user_name: { type: 'string' } } },
      },
      event_guests: { type: 'array', items: { type: 'object', properties: { email: { type: 'string' }, created_at: time, updated_at: time } } },
      cancellation: {
        type: 'object',
        properties: {
          canceled_by: { type: 'string' },
          reason: nullable({ type: 'string' }),
          canceler_type: { type: 'string', enum: ['host', 'invitee'] },
          created_at: time,
        },
      },
    },
  },
  Invitee: {
    type: 'object',
    required: ['uri', 'email', 'name', 'status', 'event', 'created_at', 'updated_at'],
    properties: {
      uri: { type: 'string', format: 'uri', example: 'https://api.calendly.com/scheduled_events/AAAAAAAAAAAAAAAA/invitees/AAAAAAAAAAAAAAAA' },
      email: { type: 'string', format: 'email' },
      first_name: nullable({ type: 'string' }),
      last_name: nullable({ type: 'string' }),
      name: { type: 'string' },
      status: { type: 'string', enum: ['active', 'canceled'] },
      questions_and_answers: {
        type: 'array',
        items: { type: 'object', properties: { question: { type: 'string' }, answer: { type: 'string' }, position: { type: 'integer' } } },
      },
      timezone: nullable({ type: 'string' }),
      event: URI('scheduled_events'),
      created_at: time,
      updated_at: time,
      tracking: { type: 'object', additionalProperties: true },
      text_reminder_number: nullable({ type: 'string' }),
      rescheduled: { type: 'boolean' },
      old_invitee: nullable({ type: 'string', format: 'uri' }),
      new_invitee: nullable({ type: 'string', format: 'uri' }),
      cancel_url: { type: 'string', format: 'uri' },
      reschedule_url: { type: 'string', format: 'uri' },
      no_show: nullable({ type: 'object', properties: { uri: { type: 'string' }, created_at: time } }),
    },
  },
  WebhookSubscription: {
    type: 'object',
    required: ['uri', 'callback_url', 'state', 'events', 'scope', 'organization'],
    properties: {
      uri: URI('webhook_subscriptions'),
      callback_url: { type: 'string', format: 'uri' },
      created_at: time,
      updated_at: time,
      retry_started_at: nullable(time),
      state: { type: 'string', enum: ['active', 'disabled'] },
      events: { type: 'array', items: { $ref: '#/components/schemas/WebhookEvent' } },
      scope: { type: 'string', enum: ['user', 'organization', 'group'] },
      organization: URI('organizations'),
      user: nullable(URI('users')),
      group: nullable(URI('groups')),
      creator: nullable(URI('users')),
    },
  },
  WebhookEvent: {
    type: 'string',
    enum: ['invitee.created', 'invitee.canceled', 'invitee_no_show.created', 'invitee_no_show.deleted', 'routing_form_submission.created'],
  },
  Pagination: {
    type: 'object',
    required: ['count', 'next_page', 'previous_page', 'next_page_token', 'previous_page_token'],
    properties: {
      count: { type: 'integer' },
      next_page: nullable({ type: 'string', format: 'uri' }),
      previous_page: nullable({ type: 'string', format: 'uri' }),
      next_page_token: nullable({ type: 'string' }),
      previous_page_token: nullable({ type: 'string' }),
    },
  },
  Error: {
    type: 'object',
    required: ['title', 'message'],
    properties: {
      title: { type: 'string', example: 'Invalid Argument' },
      message: { type: 'string', example: 'The supplied parameters are invalid.' },
      details: { type: 'array', items: { type: 'object', properties: { parameter: { type: 'string' }, message: { type: 'string' } } } },
    },
  },
};

const ref = (name) => ({ $ref: `#/components/schemas/${name}` });
const ok = (schema, status = '200') => ({
  [status]: { description: 'Success', content: { 'application/json': { schema } } },
  default: { description: 'Error', content: { 'application/json': { schema: ref('Error') } } },
});
const one = (name) => ok({ type: 'object', required: ['resource'], properties: { resource: ref(name) } });
const many = (name) =>
  ok({
    type: 'object',
    required: ['collection', 'pagination'],
    properties: { collection: { type: 'array', items: ref(name) }, pagination: ref('Pagination') },
  });
const q = (name, schema, extra = {}) => ({ name, in: 'query', schema, ...extra });
const path = (name) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const pages = [q('count', { type: 'integer', minimum: 1, maximum: 100, default: 20 }), q('page_token', { type: 'string' })];
const scope = [q('organization', { type: 'string', format: 'uri' }), q('user', { type: 'string', format: 'uri' })];
const sort = (fields) => q('sort', { type: 'string', enum: fields.flatMap((f) => [`${f}:asc`, `${f}:desc`]) });
const op = (id, summary, parameters, responses, extra = {}) => ({
  operationId: id,
  summary,
  'x-derived-by': DERIVED,
  ...(parameters.length ? { parameters } : {}),
  responses,
  ...extra,
});

const paths = {
  '/users/me': { get: op('getCurrentUser', 'Get the current user', [], one('User')) },
  '/users/{uuid}': { get: op('getUser', 'Get a user', [path('uuid')], one('User')) },
  '/organization_memberships': {
    get: op(
      'listOrganizationMemberships',
      "List an organization's memberships (its users)",
      [
        ...pages,
        q('email', { type: 'string', format: 'email' }),
        q('organization', { type: 'string', format: 'uri' }),
        q('user', { type: 'string', format: 'uri' }),
        q('role', { type: 'string', enum: ['owner', 'admin', 'user'] }),
      ],
      many('OrganizationMembership'),
    ),
  },
  '/organization_memberships/{uuid}': { get: op('getOrganizationMembership', 'Get an organization membership', [path('uuid')], one('OrganizationMembership')) },
  '/event_types': {
    get: op(
      'listEventTypes',
      "List a user's or an organization's event types (one of user, organization)",
      [...scope, q('active', { type: 'boolean' }), q('admin_managed', { type: 'boolean' }), ...pages, sort(['name', 'position', 'created_at', 'updated_at'])],
      many('EventType'),
    ),
  },
  '/event_types/{uuid}': { get: op('getEventType', 'Get an event type', [path('uuid')], one('EventType')) },
  '/scheduled_events': {
    get: op(
      'listScheduledEvents',
      "List a user's or an organization's scheduled events (one of user, organization)",
      [
        ...scope,
        q('invitee_email', { type: 'string', format: 'email' }),
        q('status', { type: 'string', enum: ['active', 'canceled'] }),
        q('min_start_time', time),
        q('max_start_time', time),
        ...pages,
        sort(['start_time']),
      ],
      many('ScheduledEvent'),
    ),
  },
  '/scheduled_events/{uuid}': { get: op('getScheduledEvent', 'Get a scheduled event', [path('uuid')], one('ScheduledEvent')) },
  '/scheduled_events/{uuid}/cancellation': {
    post: op(
      'cancelScheduledEvent',
      'Cancel a scheduled event',
      [path('uuid')],
      ok({ type: 'object', properties: { resource: schemas.ScheduledEvent.properties.cancellation } }, '201'),
      {
        requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { reason: { type: 'string', maxLength: 10000 } } } } } },
      },
    ),
  },
  '/scheduled_events/{uuid}/invitees': {
    get: op(
      'listEventInvitees',
      "List a scheduled event's invitees",
      [
        path('uuid'),
        q('status', { type: 'string', enum: ['active', 'canceled'] }),
        q('email', { type: 'string', format: 'email' }),
        ...pages,
        sort(['created_at']),
      ],
      many('Invitee'),
    ),
  },
  '/scheduled_events/{event_uuid}/invitees/{invitee_uuid}': {
    get: op('getEventInvitee', 'Get an invitee of a scheduled event', [path('event_uuid'), path('invitee_uuid')], one('Invitee')),
  },
  '/webhook_subscriptions': {
    get: op(
      'listWebhookSubscriptions',
      'List webhook subscriptions',
      [
        q('organization', { type: 'string', format: 'uri' }, { required: true }),
        q('user', { type: 'string', format: 'uri' }),
        q('scope', { type: 'string', enum: ['user', 'organization', 'group'] }, { required: true }),
        ...pages,
      ],
      many('WebhookSubscription'),
    ),
    post: op('createWebhookSubscription', 'Create a webhook subscription', [], one('WebhookSubscription'), {
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['url', 'events', 'organization', 'scope'],
              properties: {
                url: { type: 'string', format: 'uri' },
                events: { type: 'array', minItems: 1, items: ref('WebhookEvent') },
                organization: { type: 'string', format: 'uri' },
                user: { type: 'string', format: 'uri' },
                scope: { type: 'string', enum: ['user', 'organization', 'group'] },
                signing_key: {
                  type: 'string',
                  description: 'The key Calendly signs deliveries with (Calendly-Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">)',
                },
              },
            },
          },
        },
      },
    }),
  },
  '/webhook_subscriptions/{uuid}': { get: op('getWebhookSubscription', 'Get a webhook subscription', [path('uuid')], one('WebhookSubscription')) },
};
paths['/webhook_subscriptions'].post.responses = {
  201: paths['/webhook_subscriptions'].post.responses['200'],
  default: paths['/webhook_subscriptions'].post.responses.default,
};

const out = {
  openapi: '3.0.3',
  info: {
    title: 'Calendly API v2 (ours)',
    version: '2',
    description: `Our own description of the part of Calendly's API v2 that connectors/calendly uses, derived by ${DERIVED} from Calendly's API reference (developer.calendly.com/api-docs). Not Calendly's file.`,
    license: { name: 'MIT (ours, this repository)' },
  },
  servers: [{ url: 'https://api.calendly.com' }],
  security: [{ bearer: [] }, { oauth2: [] }],
  components: {
    schemas,
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: 'A personal access token' },
      oauth2: {
        type: 'oauth2',
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://auth.calendly.com/oauth/authorize',
            tokenUrl: 'https://auth.calendly.com/oauth/token',
            refreshUrl: 'https://auth.calendly.com/oauth/token',
            scopes: {},
          },
        },
      },
    },
  },
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
