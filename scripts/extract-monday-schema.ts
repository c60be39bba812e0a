/**
 * Extracts, from monday's own GraphQL schema for API version 2026-10 (the SDL answer of
 * api.monday.com/v2/get_schema), the part the Monday connector and simulator use: the root
 * query and mutation fields listed below and every type reachable from them (with every
 * implementation of a reachable interface, so fragments such as `... on MirrorValue` validate).
 * Types are copied whole, with their descriptions, argument defaults and @deprecated reasons, so
 * a document that validates against the extract validates against monday's schema and the other
 * way round for these root fields. The output, connectors/monday/schema-2026-10.graphql (the manifest's vendor_description), is
 * committed: the simulator and the contract test never read the upstream file at run time.
 *
 * Usage: npx tsx scripts/extract-monday-schema.ts [path/to/monday-schema-2026-10.graphql]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  buildSchema,
  getNamedType,
  GraphQLObjectType,
  GraphQLSchema,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  isUnionType,
  printSchema,
  type GraphQLNamedType,
  type GraphQLType,
} from 'graphql';

const SOURCE = process.argv[2] ?? '/work/shared/upstreams/monday-schema-2026-10.graphql';
const OUT = fileURLToPath(new URL('../connectors/monday/schema-2026-10.graphql', import.meta.url));
const API_VERSION = '2026-10';

/** Root query fields the connector sends or the simulator serves. */
const QUERY_FIELDS = [
  'account',
  'me',
  'complexity',
  'version',
  'versions',
  'users',
  'teams',
  'tags',
  'workspaces',
  'boards',
  'items',
  'next_items_page',
  'updates',
];
/** Root mutation fields the connector sends or the simulator serves. */
const MUTATION_FIELDS = [
  'complexity',
  'create_item',
  'change_multiple_column_values',
  'change_column_value',
  'change_simple_column_value',
  'archive_item',
  'delete_item',
  'create_subitem',
  'create_update',
  'edit_update',
  'delete_update',
  'create_group',
  'create_column',
  'create_or_get_tag',
  'create_webhook',
];

function pick(type: GraphQLObjectType, names: string[]): GraphQLObjectType {
  const config = type.toConfig();
  const fields: typeof config.fields = {};
  for (const n of names) {
    const f = config.fields[n];
    if (f === undefined) throw new Error(`${type.name}.${n} is not in the source schema`);
    fields[n] = f;
  }
  return new GraphQLObjectType({ ...config, fields });
}

const source = buildSchema(readFileSync(SOURCE, 'utf8'));
const query = pick(source.getQueryType() as GraphQLObjectType, QUERY_FIELDS);
const mutation = pick(source.getMutationType() as GraphQLObjectType, MUTATION_FIELDS);

// Every named type reachable from the picked root fields, plus interface implementations.
const seen = new Map<string, GraphQLNamedType>();
const visit = (t: GraphQLType): void => {
  const n = getNamedType(t);
  if (seen.has(n.name)) return;
  seen.set(n.name, n);
  if (isObjectType(n) || isInterfaceType(n) || isInputObjectType(n)) {
    for (const f of Object.values(n.getFields())) {
      visit(f.type);
      for (const a of 'args' in f ? f.args : []) visit(a.type);
    }
  }
  if (isObjectType(n) || isInterfaceType(n)) for (const i of n.getInterfaces()) visit(i);
  if (isInterfaceType(n)) for (const o of source.getImplementations(n).objects) visit(o);
  if (isUnionType(n)) for (const o of n.getTypes()) visit(o);
};
for (const root of [query, mutation])
  for (const f of Object.values(root.getFields())) {
    visit(f.type);
    for (const a of f.args) visit(a.type);
  }

const extract = new GraphQLSchema({ query, mutation, types: [...seen.values()].filter((t) => t.name !== 'Query' && t.name !== 'Mutation') });
const header = `# Extracted by scripts/extract-monday-schema.ts from monday's GraphQL schema for API version ${API_VERSION}
# (api.monday.com/v2/get_schema?format=sdl&version=${API_VERSION}); do not edit, re-run the script.
# Root fields: Query { ${QUERY_FIELDS.join(' ')} } Mutation { ${MUTATION_FIELDS.join(' ')} }
# and every type reachable from them, copied whole (descriptions, defaults, @deprecated).
`;
writeFileSync(OUT, `${header}\n${printSchema(extract)}\n`);
console.log(`wrote ${OUT}: ${String(Object.keys(extract.getTypeMap()).filter((n) => !n.startsWith('__')).length)} types`);
