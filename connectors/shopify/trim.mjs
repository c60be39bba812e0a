#!/usr/bin/env node
// Trims Shopify's GraphQL Admin API schema, version 2026-10, to the part connectors/shopify uses.
// The schema is Shopify's own introspection answer as shipped in Shopify's npm package
// @shopify/dev-mcp@1.16.0 (ISC, per its package.json), dist/data/admin_2026-10.json.gz.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @shopify/dev-mcp@1.16.0 && tar xzf shopify-dev-mcp-1.16.0.tgz)
//   node connectors/shopify/trim.mjs "$d/package/dist/data/admin_2026-10.json.gz" > connectors/shopify/schema-2026-10.graphql
//
// Kept: the root fields and mutations below; of the object, interface and union types, those in
// OUTPUT (with the fields whose types are scalars, enums or other kept types: a field whose type
// is left out is dropped, so a document valid against this extract is valid against Shopify's
// schema; of Shop, only the fields in ONLY); every argument of a kept field, with the input types, enums and scalars it reaches.
// Descriptions and deprecations are Shopify's. Nothing is added.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { buildClientSchema, printSchema } from 'graphql';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: trim.mjs <admin_2026-10.json.gz from @shopify/dev-mcp>\n');
  process.exit(2);
}
const fail = (msg) => {
  throw new Error(`trim.mjs: ${msg}`);
};
const schema = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')).data.__schema;

const QUERY = [
  'shop',
  'products',
  'product',
  'orders',
  'order',
  'customers',
  'customer',
  'locations',
  'location',
  'inventoryItems',
  'inventoryItem',
  'inventoryLevel',
];
const MUTATION = ['productCreate', 'productUpdate', 'orderUpdate', 'customerCreate', 'customerUpdate', 'inventorySetQuantities'];
const OUTPUT = [
  'Node',
  'LegacyInteroperability',
  'PageInfo',
  'UserError',
  'MoneyV2',
  'MoneyBag',
  'MailingAddress',
  'Shop',
  'ShopPlan',
  'Product',
  'ProductConnection',
  'ProductEdge',
  'ProductPriceRangeV2',
  'ProductOption',
  'ProductVariant',
  'ProductVariantConnection',
  'ProductCreatePayload',
  'ProductUpdatePayload',
  'SEO',
  'Order',
  'OrderConnection',
  'OrderEdge',
  'OrderUpdatePayload',
  'LineItem',
  'LineItemConnection',
  'Customer',
  'CustomerConnection',
  'CustomerEdge',
  'CustomerEmailAddress',
  'CustomerPhoneNumber',
  'CustomerCreatePayload',
  'CustomerUpdatePayload',
  'Location',
  'LocationConnection',
  'LocationAddress',
  'InventoryItem',
  'InventoryItemConnection',
  'InventoryLevel',
  'InventoryLevelConnection',
  'InventoryLevelEdge',
  'InventoryQuantity',
  'InventorySetQuantitiesPayload',
  'InventorySetQuantitiesUserError',
  'InventoryAdjustmentGroup',
  'InventoryChange',
];

/** Types of which only these fields are kept (the shop is read only by the credential check). */
const ONLY = { Shop: ['id', 'name', 'email', 'myshopifyDomain', 'currencyCode', 'ianaTimezone', 'plan', 'createdAt', 'updatedAt'] };

const byName = new Map(schema.types.map((t) => [t.name, t]));
for (const n of OUTPUT) if (!byName.has(n)) fail(`no type ${n}`);
const queryName = schema.queryType.name;
const mutationName = schema.mutationType.name;
const keptOut = new Set([...OUTPUT, queryName, mutationName]);
const named = (ref) => (ref.ofType ? named(ref.ofType) : ref.name);
const isComposite = (name) => ['OBJECT', 'INTERFACE', 'UNION'].includes(byName.get(name)?.kind);

const out = [];
const reached = new Set();
/** Input types, enums and scalars an argument or input field reaches. */
function reachInput(name) {
  if (reached.has(name)) return;
  reached.add(name);
  const t = byName.get(name) ?? fail(`no type ${name}`);
  if (t.kind === 'INPUT_OBJECT') for (const f of t.inputFields) reachInput(named(f.type));
}
function keepFields(t, only) {
  const fields = t.fields.filter((f) => (only ? only.includes(f.name) : true) && (!isComposite(named(f.type)) || keptOut.has(named(f.type))));
  if (only) for (const n of only) if (!fields.some((f) => f.name === n)) fail(`${t.name}.${n} missing`);
  for (const f of fields) {
    if (!isComposite(named(f.type))) reachInput(named(f.type));
    for (const a of f.args) reachInput(named(a.type));
  }
  return fields;
}
for (const t of schema.types) {
  if (t.name.startsWith('__')) continue;
  if (t.name === queryName) out.push({ ...t, fields: keepFields(t, QUERY) });
  else if (t.name === mutationName) out.push({ ...t, fields: keepFields(t, MUTATION) });
  else if (keptOut.has(t.name)) {
    const interfaces = (t.interfaces ?? []).filter((i) => keptOut.has(i.name));
    const possibleTypes = t.possibleTypes ? t.possibleTypes.filter((p) => keptOut.has(p.name)) : t.possibleTypes;
    out.push({ ...t, fields: t.fields ? keepFields(t, ONLY[t.name]) : t.fields, interfaces, possibleTypes });
  }
}
for (const t of schema.types) if (reached.has(t.name) && !keptOut.has(t.name) && !t.name.startsWith('__')) out.push(t);
const trimmed = {
  ...schema,
  subscriptionType: null,
  types: out,
  directives: schema.directives.filter((d) => ['include', 'skip', 'deprecated', 'oneOf', 'specifiedBy'].includes(d.name)),
};
const sdl = printSchema(buildClientSchema({ __schema: trimmed }));
process.stdout.write(
  `# Shopify GraphQL Admin API 2026-10, trimmed by connectors/shopify/trim.mjs to the part connectors/shopify uses.\n# From npm:@shopify/dev-mcp@1.16.0/dist/data/admin_2026-10.json.gz (Shopify's introspection; ISC). Do not edit.\n\n${sdl}\n`,
);
