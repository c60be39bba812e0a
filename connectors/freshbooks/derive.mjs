#!/usr/bin/env node
// Derives an OpenAPI 3.0 description of the part of FreshBooks' API the connector uses (the
// identity endpoint; clients, invoices and expenses of an accounting account) from FreshBooks'
// official Node client, the npm package `@freshbooks/api` (MIT, per its package.json). FreshBooks
// publishes no OpenAPI description. The client keeps, per resource, the method and path of each
// call (dist/APIClient.js), and per model the API's own snake_case field names: each
// transform<Model>ParsedResponse maps the client's camelCase property to the raw field it reads
// (`fName: client.fname`), with the date format it parses; each transform<Model>Request writes the
// raw fields a create or update sends, inside the one-key envelope the API takes (`{client: {...}}`).
// The models' .d.ts give each property's type, nullability and enums. This script reads exactly that
// back: record schemas from the response mappings and .d.ts types, request bodies from the request
// mappings. What the client does not carry comes from FreshBooks' API reference
// (https://www.freshbooks.com/api/) and is marked `x-added-by`: the `{response: {result: ...}}`
// envelopes with page, pages, per_page and total (the client unwraps them in its list transforms),
// the list params (page and per_page, capped at 100; the search[...] filters and include[] of each
// resource's reference page), the accounting error body, the OAuth URLs and scopes, and vis_state 2
// (archived), which the client's VisState enum lacks.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @freshbooks/api@4.1.0 && tar xzf freshbooks-api-4.1.0.tgz)
//   node connectors/freshbooks/derive.mjs "$d" > connectors/freshbooks/openapi.json
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const models = dir && join(dir, 'package/dist/models');
if (!models || !existsSync(join(models, 'Client.js'))) {
  process.stderr.write('usage: derive.mjs <folder holding package/ (@freshbooks/api unpacked)>\n');
  process.exit(2);
}
const fail = (msg) => {
  throw new Error(`derive.mjs: ${msg}`);
};
const read = (...p) => readFileSync(join(dir, 'package', ...p), 'utf8');
const clientVersion = JSON.parse(read('package.json')).version;
const apiClient = read('dist/APIClient.js');
const ADDED = 'connectors/freshbooks/derive.mjs, from https://www.freshbooks.com/api/';

/** The body of a top-level function of a model's .js. */
function functionBody(js, name) {
  const start = js.indexOf(`function ${name}(`);
  if (start < 0) fail(`no function ${name}`);
  const end = js.indexOf('\n}\n', start);
  return js.slice(start, end);
}

/** `camel: <expr>` entries of an object literal returned by a transform function, one per property. */
function entries(body) {
  const out = [];
  for (const m of body.matchAll(/^ {8,12}(\w+): ([\s\S]*?),$/gm)) out.push([m[1], m[2]]);
  return out;
}

/** The .d.ts properties of an interface: camel name → {type, optional}. */
function interfaceProps(dts, name) {
  const m = dts.match(new RegExp(`interface ${name} \\{([\\s\\S]*?)\\n\\}`));
  if (!m) fail(`no interface ${name}`);
  const props = {};
  for (const p of m[1].matchAll(/^ {4}(\w+)(\?)?: (.+);$/gm)) props[p[1]] = { type: p[2] ? p[3] : p[3], optional: !!p[2] };
  return props;
}

/** Enums declared in a .d.ts: name → values (numbers or strings). */
function enums(dts) {
  const out = {};
  for (const m of dts.matchAll(/enum (\w+) \{([\s\S]*?)\}/g)) {
    out[m[1]] = [...m[2].matchAll(/= ("?)([^",\n]+)\1/g)].map((v) => (v[1] ? v[2] : Number(v[2])));
  }
  return out;
}

// The invoice's write-only fields of its send-by-email action (the client's request transform);
// no record field holds them.
const WRITE_ONLY = {
  email_recipients: { type: 'array', items: { type: 'string' } },
  email_include_pdf: { type: 'boolean' },
  invoice_customized_email: { type: 'object', properties: { subject: { type: 'string' }, body: { type: 'string' } } },
};

const schemas = {};
const INTEGER = /^(id|level|numLogins|status|type|dueOffsetDays|extArchive|parent|sentId)$|Id$/;

/** A .d.ts type as JSON Schema; models named in it are read in turn. */
function typeSchema(type, camel, modelEnums, imports) {
  let t = type.trim();
  let nullable = false;
  const n = t.match(/^Nullable<(.+)>$/);
  if (n) [nullable, t] = [true, n[1]];
  let s;
  if (t.endsWith('[]')) s = { type: 'array', items: typeSchema(t.slice(0, -2), camel, modelEnums, imports) };
  else if (t === 'string') s = { type: 'string' };
  else if (t === 'boolean') s = { type: 'boolean' };
  else if (t === 'number') s = { type: INTEGER.test(camel) ? 'integer' : 'number' };
  else if (t === 'Date') s = { type: 'string' };
  else if (t === 'VisState') s = { type: 'integer', enum: [0, 1, 2], 'x-added-by': `${ADDED} (2: archived)` };
  else if (modelEnums[t]) {
    const values = modelEnums[t];
    s = typeof values[0] === 'number' ? { type: 'integer', enum: values } : { type: 'string', enum: values };
  } else if (imports.has(t)) s = { $ref: `#/components/schemas/${model(t)}` };
  else if (/^Map<|^\{/.test(t)) s = { type: 'object' };
  else fail(`type ${t} of ${camel}`);
  if (!nullable) return s;
  return s.$ref ? { nullable: true, allOf: [s] } : { ...s, nullable: true };
}

/** Reads one model (its response mapping and types) into components/schemas; returns its name. */
function model(name, { response = `transform${name}ParsedResponse`, iface = name } = {}) {
  if (schemas[name]) return name;
  schemas[name] = {};
  const js = read(`dist/models/${name}.js`);
  const dts = read(`dist/models/${name}.d.ts`);
  const imports = new Set([...dts.matchAll(/^import (\w+)/gm)].map((m) => m[1]));
  const props = interfaceProps(dts, iface);
  const modelEnums = enums(dts);
  const body = functionBody(js, response);
  const param = body.match(/\((\w+)\)/)[1];
  const properties = {};
  for (const [camel, expr] of entries(body)) {
    const raw = expr.match(new RegExp(`\\b${param}\\.(\\w+)`))?.[1];
    if (!raw || !props[camel]) fail(`${name}.${camel}: no raw field or type`);
    let s = typeSchema(props[camel].type, camel, modelEnums, imports);
    if (expr.includes("DateFormat['YYYY-MM-DD']")) s = { ...s, format: 'date' };
    else if (expr.includes("DateFormat['YYYY-MM-DD hh:mm:ss']")) s = { ...s, description: 'YYYY-MM-DD hh:mm:ss, US/Eastern time (the client parses it so)' };
    if (/^Number\(/.test(expr)) s = { type: 'string', description: 'a decimal as text (the client reads it with Number())' };
    properties[raw] = s;
  }
  schemas[name] = { type: 'object', properties };
  return name;
}

/** The raw fields a request transform writes (every branch), each typed as the record's field. */
function requestFields(name, record, fn = `transform${name}Request`) {
  const body = functionBody(read(`dist/models/${name}.js`), fn);
  const param = body.match(/\((\w+)(?: = \{\})?\)/)[1];
  const out = {};
  for (const m of body.matchAll(new RegExp(`^ +(\\w+): (?:(true)|(?:\\(0, )?[^,\\n]*?\\b${param}\\.(\\w+))`, 'gm'))) {
    const raw = m[1];
    if (raw === 'id') continue;
    if (m[2]) out[raw] = { type: 'boolean', description: 'an action flag, sent alone (true)' };
    else if (record.properties[raw]) out[raw] = record.properties[raw];
    else if (WRITE_ONLY[raw]) out[raw] = WRITE_ONLY[raw];
    // The client's Client request writes user_id where the record (and the API) has userid: left out.
    else process.stderr.write(`derive.mjs: ${name}: the client writes ${raw}, which no record field is; left out\n`);
  }
  return out;
}

// Records, read from the client's models.
const money = model('Money', { response: 'transformMoneyParsedResponse' });
schemas[money].properties.amount.description = 'a decimal amount as text ("100.00")';
const line = model('Line');
const LineWrite = { type: 'object', properties: requestFields('Line', schemas[line], 'transformLineParsedRequest') };
LineWrite.properties.unit_cost = { $ref: `#/components/schemas/${money}` };
schemas.LineWrite = LineWrite;
const clientName = model('Client');
const invoiceName = model('Invoices', { response: 'transformInvoiceParsedResponse', iface: 'Invoice' });
const expenseName = model('Expense');

/** The identity (GET /auth/api/v1/users/me): the client's *Response interfaces name the raw fields. */
function identity() {
  const dtsProps = (file, iface) => {
    const dts = read(`dist/models/${file}.d.ts`);
    const out = {};
    for (const [raw, { type }] of Object.entries(interfaceProps(dts, iface))) {
      const t = type.replace(/^Nullable<(.+)>$/, '$1');
      if (t === 'number') out[raw] = { type: 'integer' };
      else if (t === 'string') out[raw] = { type: 'string' };
    }
    return out;
  };
  const business = { type: 'object', properties: dtsProps('Business', 'BusinessResponse') };
  business.properties.business_uuid = { type: 'string', 'x-added-by': ADDED };
  schemas.Business = business;
  schemas.BusinessMembership = {
    type: 'object',
    properties: { ...dtsProps('BusinessMembership', 'BusinessMembershipResponse'), business: { $ref: '#/components/schemas/Business' } },
  };
  schemas.Role = { type: 'object', properties: dtsProps('Role', 'RoleResponse') };
  const userJs = functionBody(read('dist/models/User.js'), 'transformUserParsedResponse');
  const raw = new Set([...userJs.matchAll(/\buser\.(\w+)/g)].map((m) => m[1]));
  for (const k of ['id', 'first_name', 'last_name', 'email', 'business_memberships', 'roles']) if (!raw.has(k)) fail(`User has no ${k}`);
  schemas.Identity = {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      identity_id: { type: 'integer', 'x-added-by': ADDED },
      first_name: { type: 'string' },
      last_name: { type: 'string' },
      email: { type: 'string' },
      business_memberships: { type: 'array', items: { $ref: '#/components/schemas/BusinessMembership' } },
      roles: { type: 'array', items: { $ref: '#/components/schemas/Role' } },
    },
  };
}
identity();

// The accounting error body (https://www.freshbooks.com/api/errors), which the client's
// transformAccountingErrorResponse reads: {response: {errors: [{errno, field, message, object, value}]}}.
const errorsJs = read('dist/models/Error.js');
for (const k of ['errno', 'field', 'object', 'value']) if (!errorsJs.includes(k)) fail(`error field ${k}`);
schemas.AccountingError = {
  type: 'object',
  'x-added-by': ADDED,
  properties: {
    response: {
      type: 'object',
      properties: {
        errors: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              errno: { type: 'integer' },
              field: { type: 'string' },
              message: { type: 'string' },
              object: { type: 'string' },
              value: { type: 'string' },
            },
          },
        },
      },
    },
  },
};

/** What the reference lists per resource (searches, includes), and the client's calls. */
const RESOURCES = {
  clients: {
    one: 'client',
    model: clientName,
    path: 'users/clients',
    scope: 'clients',
    required: [],
    search: {
      email: { type: 'string' },
      fname_like: { type: 'string' },
      lname_like: { type: 'string' },
      organization_like: { type: 'string' },
      updated_min: { type: 'string', format: 'date' },
      updated_max: { type: 'string', format: 'date' },
      vis_state: { type: 'integer', enum: [0, 1, 2] },
    },
    include: ['outstanding_balance', 'credit_balance', 'draft_balance', 'overdue_balance', 'grand_total_balance', 'last_activity'],
  },
  invoices: {
    one: 'invoice',
    model: invoiceName,
    path: 'invoices/invoices',
    scope: 'invoices',
    required: ['customerid', 'create_date'],
    search: {
      customerid: { type: 'integer' },
      invoice_number: { type: 'string' },
      date_min: { type: 'string', format: 'date' },
      date_max: { type: 'string', format: 'date' },
      updated_min: { type: 'string', format: 'date' },
      updated_max: { type: 'string', format: 'date' },
      v3_status: { type: 'string' },
    },
    include: ['lines', 'owner', 'allowed_gateways'],
  },
  expenses: {
    one: 'expense',
    model: expenseName,
    path: 'expenses/expenses',
    scope: 'expenses',
    required: ['categoryid', 'staffid', 'date', 'amount'],
    search: {
      clientid: { type: 'integer' },
      categoryid: { type: 'integer' },
      date_min: { type: 'string', format: 'date' },
      date_max: { type: 'string', format: 'date' },
      updated_min: { type: 'string', format: 'date' },
      updated_max: { type: 'string', format: 'date' },
    },
    include: ['attachment'],
  },
};

const ref = (name) => ({ $ref: `#/components/schemas/${name}` });
const wrapped = (result) => ({ type: 'object', properties: { response: { type: 'object', properties: { result } } } });
const json = (schema) => ({ 'application/json': { schema } });
const errors = {
  400: { description: 'Refused', content: json(ref('AccountingError')) },
  401: { description: 'Not authenticated', content: json(ref('AccountingError')) },
  404: { description: 'Not found', content: json(ref('AccountingError')) },
};
const security = (type, write) => [{ oauth2: [`user:${type}:read`, ...(write ? [`user:${type}:write`] : [])] }];
const accountId = {
  name: 'accountId',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description: "The account's id (business_memberships[].business.account_id of the identity)",
};
const paths = {};

for (const [plural, r] of Object.entries(RESOURCES)) {
  const modelJs = read(`dist/models/${r.model}.js`);
  const calls = [...apiClient.matchAll(new RegExp(`this\\.call\\('(\\w+)', \`/accounting/account/\\$\\{accountId\\}/${r.path}(/\\$\\{\\w+\\})?`, 'g'))];
  const seen = new Set(calls.map((m) => `${m[1]} ${m[2] ? 'item' : 'collection'}`));
  for (const k of ['GET collection', 'POST collection', 'GET item', 'PUT item']) if (!seen.has(k)) fail(`${plural}: the client makes no ${k} call`);
  if (!modelJs.includes(`const { ${r.one} } = response.response.result`)) fail(`${plural}: no response.result.${r.one}`);
  const record = schemas[r.model];
  const writable = requestFields(r.model, record, r.model === 'Invoices' ? 'transformInvoiceRequest' : undefined);
  if (writable.lines) writable.lines = { type: 'array', items: ref('LineWrite') };
  const missing = r.required.filter((k) => !writable[k]);
  if (missing.length) fail(`${plural}: required ${missing} not written by the client`);
  const body = (required) => ({
    required: true,
    content: json({
      type: 'object',
      required: [r.one],
      properties: { [r.one]: { type: 'object', ...(required.length ? { required } : {}), properties: writable } },
    }),
  });
  const one = {
    type: 'object',
    properties: { response: { type: 'object', properties: { result: { type: 'object', properties: { [r.one]: ref(r.model) } } } } },
  };
  const page = {
    type: 'object',
    'x-added-by': ADDED,
    properties: {
      response: {
        type: 'object',
        properties: {
          result: {
            type: 'object',
            properties: {
              [plural]: { type: 'array', items: ref(r.model) },
              page: { type: 'integer' },
              pages: { type: 'integer' },
              per_page: { type: 'integer' },
              total: { type: 'integer' },
            },
          },
        },
      },
    },
  };
  const idName = `${r.one}Id`;
  const include = {
    name: 'include',
    in: 'query',
    style: 'deepObject',
    explode: true,
    schema: { type: 'array', items: { type: 'string', enum: r.include } },
    'x-added-by': ADDED,
  };
  paths[`/accounting/account/{accountId}/${r.path}`] = {
    get: {
      operationId: `list_${plural}`,
      summary: `List ${plural}`,
      security: security(r.scope, false),
      parameters: [
        accountId,
        { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1 }, 'x-added-by': ADDED },
        { name: 'per_page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100 }, 'x-added-by': ADDED },
        { name: 'search', in: 'query', style: 'deepObject', explode: true, schema: { type: 'object', properties: r.search }, 'x-added-by': ADDED },
        include,
      ],
      responses: { 200: { description: `A page of ${plural}`, content: json(page) }, ...errors },
    },
    post: {
      operationId: `create_${r.one}`,
      summary: `Create a ${r.one}`,
      security: security(r.scope, true),
      parameters: [accountId],
      requestBody: body(r.required),
      responses: { 200: { description: `The ${r.one}`, content: json(one) }, ...errors },
    },
  };
  paths[`/accounting/account/{accountId}/${r.path}/{${idName}}`] = {
    parameters: [accountId, { name: idName, in: 'path', required: true, schema: { type: 'integer' } }],
    get: {
      operationId: `get_${r.one}`,
      summary: `Get a ${r.one}`,
      security: security(r.scope, false),
      parameters: [include],
      responses: { 200: { description: `The ${r.one}`, content: json(one) }, ...errors },
    },
    put: {
      operationId: `update_${r.one}`,
      summary: `Update a ${r.one} (vis_state 1 deletes it, 2 archives it)`,
      security: security(r.scope, true),
      requestBody: body([]),
      responses: { 200: { description: `The ${r.one}`, content: json(one) }, ...errors },
    },
  };
}

// An invoice's share link (the client's invoices.shareLink): the URL a client opens the invoice at.
const shareLink = model('ShareLink');
if (!apiClient.includes('/invoices/invoices/${invoiceId}/share_link?share_method=share_link')) fail('no share link call');
paths['/accounting/account/{accountId}/invoices/invoices/{invoiceId}/share_link'] = {
  get: {
    operationId: 'get_invoice_share_link',
    summary: "An invoice's share link",
    security: security('invoices', false),
    parameters: [
      accountId,
      { name: 'invoiceId', in: 'path', required: true, schema: { type: 'integer' } },
      { name: 'share_method', in: 'query', required: true, schema: { type: 'string', enum: ['share_link'] } },
    ],
    responses: {
      200: { description: 'The link', content: json(wrapped({ type: 'object', properties: { share_link: ref(shareLink) } })) },
      ...errors,
    },
  },
};

if (!apiClient.includes("'/auth/api/v1/users/me'")) fail('no identity call');
paths['/auth/api/v1/users/me'] = {
  get: {
    operationId: 'get_identity',
    summary: "The token's user, with the businesses (and their account ids) it belongs to",
    security: [{ oauth2: ['user:profile:read'] }],
    responses: {
      200: { description: 'The identity', content: json({ type: 'object', properties: { response: ref('Identity') } }) },
      401: {
        description: 'Not authenticated',
        content: json({ type: 'object', properties: { error: { type: 'string' }, error_description: { type: 'string' } } }),
      },
    },
  },
};

const base = apiClient.match(/const API_BASE_URL = '([^']+)'/)[1];
const tokenPath = apiClient.match(/const API_TOKEN_ENDPOINT = '([^']+)'/)[1];
const authBase = apiClient.match(/const AUTH_BASE_URL = '([^']+)'/)[1];
const authPath = apiClient.match(/const AUTH_ENDPOINT = '([^']+)'/)[1];
const scopes = {};
for (const s of ['user:profile:read', ...Object.values(RESOURCES).flatMap((r) => [`user:${r.scope}:read`, `user:${r.scope}:write`])]) scopes[s] = s;

const doc = {
  openapi: '3.0.3',
  info: {
    title: 'FreshBooks API (clients, invoices, expenses)',
    version: 'accounting',
    description: `Derived by connectors/freshbooks/derive.mjs from @freshbooks/api@${clientVersion} (MIT) and FreshBooks' API reference; FreshBooks publishes no OpenAPI description. Ours, not FreshBooks'.`,
    license: { name: 'MIT' },
    'x-derived-from': `npm:@freshbooks/api@${clientVersion} (MIT)`,
  },
  servers: [{ url: base }],
  paths,
  components: {
    schemas,
    securitySchemes: {
      oauth2: {
        type: 'oauth2',
        flows: {
          authorizationCode: { authorizationUrl: `${authBase}${authPath}`, tokenUrl: `${base}${tokenPath}`, refreshUrl: `${base}${tokenPath}`, scopes },
        },
      },
    },
  },
};
process.stdout.write(`${JSON.stringify(doc, null, 1)}\n`);
