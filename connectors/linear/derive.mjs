#!/usr/bin/env node
/**
 * Rebuild the part of Linear's GraphQL schema (SDL) the connector uses, from the type
 * declarations of Linear's official SDK, which its maintainers generate from that schema with
 * graphql-codegen. Linear publishes no SDL on npm; the SDK is MIT-licensed.
 *
 *   npm pack @linear/sdk@98.0.0 && tar xzf linear-sdk-98.0.0.tgz
 *   node connectors/linear/derive.mjs package/dist/index-D2pH4Pk9.d.mts > connectors/linear/schema.graphql
 *
 * How the SDK's declarations map back to SDL (read with the TypeScript compiler API):
 *   type X = { __typename?: "X"; ... } or Node & {...}   → type X implements Node { ... }
 *   type Node = { id: ... } (used in such intersections) → interface Node { ... }
 *   type <Parent><Field>Args = { a?: InputMaybe<T> }      → the arguments of Parent.field
 *   other object literals without __typename            → input types
 *   declare enum E { A = "a" }                           → enum E { a }
 *   Scalars["DateTime"]                                  → scalar DateTime
 *   Maybe<T> / InputMaybe<T> → nullable T, anything else → T!; Array<T> → [T]
 *   JSDoc text → descriptions; @deprecated reason → @deprecated(reason: ...)
 * Default values of arguments are not in the declarations and are left out.
 *
 * Only what the connector needs is kept (ROOTS below and the types they reach, trimmed): fields,
 * arguments and input fields whose types are outside the kept set are dropped when optional (a
 * document valid against this extract is valid against Linear's schema); a required one that
 * would be dropped is an error.
 */
import { readFileSync } from 'node:fs';
import ts from 'typescript';

const QUERY = ['issues', 'issue', 'projects', 'project', 'teams', 'team', 'comments', 'comment', 'users', 'user', 'viewer', 'workflowStates', 'workflowState'];
const MUTATION = [
  'issueCreate',
  'issueUpdate',
  'issueArchive',
  'issueUnarchive',
  'projectCreate',
  'projectUpdate',
  'teamCreate',
  'teamUpdate',
  'commentCreate',
  'commentUpdate',
  'userUpdate',
];
/** Object types kept (their fields trimmed to the kept set). */
const OBJECTS = ['Issue', 'Project', 'Team', 'Comment', 'User', 'WorkflowState', 'PageInfo'];
for (const t of ['Issue', 'Project', 'Team', 'Comment', 'User', 'WorkflowState']) OBJECTS.push(`${t}Connection`, `${t}Edge`);
OBJECTS.push('IssuePayload', 'IssueArchivePayload', 'ProjectPayload', 'TeamPayload', 'CommentPayload', 'UserPayload');
/** Input types kept, besides the comparators they reach (…Comparator), which are kept whole. */
const INPUTS = [
  'IssueFilter',
  'ProjectFilter',
  'TeamFilter',
  'CommentFilter',
  'UserFilter',
  'WorkflowStateFilter',
  'NullableIssueFilter',
  'NullableTeamFilter',
  'NullableUserFilter',
  'NullableProjectFilter',
  'IssueCreateInput',
  'IssueUpdateInput',
  'ProjectCreateInput',
  'ProjectUpdateInput',
  'TeamCreateInput',
  'TeamUpdateInput',
  'CommentCreateInput',
  'CommentUpdateInput',
  'UserUpdateInput',
];
const BUILTIN = new Set(['ID', 'String', 'Boolean', 'Int', 'Float']);

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node connectors/linear/derive.mjs <path to @linear/sdk dist/index-*.d.mts>\n');
  process.exit(2);
}
const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);

/** Declarations by name. */
const aliases = new Map();
const enums = new Map();
let scalarDocs = new Map();
const interfaces = new Set();
const visit = (node) => {
  if (ts.isTypeAliasDeclaration(node)) {
    aliases.set(node.name.text, node);
    if (ts.isIntersectionTypeNode(node.type)) for (const t of node.type.types) if (ts.isTypeReferenceNode(t)) interfaces.add(t.typeName.getText(source));
  } else if (ts.isEnumDeclaration(node)) enums.set(node.name.text, node);
  ts.forEachChild(node, visit);
};
visit(source);

/** JSDoc of a node: its text and @deprecated reason. */
function docOf(node) {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  if (docs.length === 0) return { text: undefined, deprecated: undefined };
  const d = docs[docs.length - 1];
  const text = typeof d.comment === 'string' ? d.comment : d.comment?.map((c) => c.text).join('');
  const dep = (d.tags ?? []).find((t) => t.tagName.text === 'deprecated');
  const reason =
    dep === undefined ? undefined : typeof dep.comment === 'string' ? dep.comment : (dep.comment?.map((c) => c.text).join('') ?? 'No longer supported');
  return { text: text?.replace(/\s+/g, ' ').trim() || undefined, deprecated: reason?.replace(/\s+/g, ' ').trim() };
}
{
  const scalars = aliases.get('Scalars');
  scalarDocs = new Map(scalars.type.members.map((m) => [m.name.getText(source), docOf(m).text]));
}

/** The members of an alias's object literal (the last literal of an intersection). */
function membersOf(name) {
  const a = aliases.get(name);
  if (a === undefined) return undefined;
  const lit = ts.isTypeLiteralNode(a.type) ? a.type : ts.isIntersectionTypeNode(a.type) ? a.type.types.find(ts.isTypeLiteralNode) : undefined;
  return lit?.members.filter(ts.isPropertySignature);
}
const implementsOf = (name) => {
  const a = aliases.get(name);
  return a !== undefined && ts.isIntersectionTypeNode(a.type) ? a.type.types.filter(ts.isTypeReferenceNode).map((t) => t.typeName.getText(source)) : [];
};

/** A TS type node as {named, sdl(named)}: Maybe → nullable, Array → list. */
function typeOf(node) {
  if (ts.isTypeReferenceNode(node)) {
    const n = node.typeName.getText(source);
    if ((n === 'Maybe' || n === 'InputMaybe') && node.typeArguments?.length === 1) {
      const inner = typeOf(node.typeArguments[0]);
      return inner && { named: inner.named, sdl: inner.sdl.replace(/!$/, '') };
    }
    if (n === 'Array' && node.typeArguments?.length === 1) {
      const inner = typeOf(node.typeArguments[0]);
      return inner && { named: inner.named, sdl: `[${inner.sdl}]!` };
    }
    if (node.typeArguments !== undefined) return undefined;
    return { named: n, sdl: `${n}!` };
  }
  if (ts.isIndexedAccessTypeNode(node) && node.objectType.getText(source) === 'Scalars') {
    const n = node.indexType.getText(source).replace(/^["']|["']$/g, '');
    return { named: n, sdl: `${n}!` };
  }
  return undefined;
}

const kindOf = (name) => {
  if (BUILTIN.has(name) || scalarDocs.has(name)) return 'scalar';
  if (enums.has(name)) return 'enum';
  if (interfaces.has(name) && aliases.has(name)) return 'interface';
  const m = membersOf(name);
  if (m === undefined) return 'other';
  return m.some((p) => p.name.getText(source) === '__typename') ? 'object' : 'input';
};

const keptObjects = new Set(OBJECTS);
const keptInputs = new Set(INPUTS);
// Comparators reachable from the kept inputs are kept whole.
const queue = [...INPUTS];
while (queue.length > 0) {
  const name = queue.pop();
  for (const p of membersOf(name) ?? []) {
    const t = typeOf(p.type);
    if (t && kindOf(t.named) === 'input' && /Comparator$/.test(t.named) && !keptInputs.has(t.named)) {
      keptInputs.add(t.named);
      queue.push(t.named);
    }
  }
}
const usedScalars = new Set();
const usedEnums = new Set();
const usedInterfaces = new Set();
/** Whether a named type is in the extract (and note the scalars and enums it uses). */
function allowed(named) {
  const k = kindOf(named);
  if (k === 'scalar') {
    if (!BUILTIN.has(named)) usedScalars.add(named);
    return true;
  }
  if (k === 'enum') return (usedEnums.add(named), true);
  if (k === 'object' || k === 'interface') return keptObjects.has(named) || (k === 'interface' && usedInterfaces.has(named));
  if (k === 'input') return keptInputs.has(named);
  return false;
}

const quote = (s) => JSON.stringify(s);
const describe = (text, indent = '') => (text ? `${indent}${quote(text)}\n` : '');
const capitalize = (s) => s[0].toUpperCase() + s.slice(1);

/** SDL arguments of Parent.field from <Parent><Field>Args; null when a required one is not kept. */
function argumentsOf(parent, field) {
  const members = membersOf(`${parent}${capitalize(field)}Args`);
  if (members === undefined) return '';
  const out = [];
  for (const p of members) {
    const t = typeOf(p.type);
    const required = t !== undefined && t.sdl.endsWith('!');
    if (t === undefined || !allowed(t.named)) {
      if (required) return null;
      continue;
    }
    const d = docOf(p);
    out.push(`${d.text ? `${quote(d.text)} ` : ''}${p.name.getText(source)}: ${t.sdl}${d.deprecated ? ` @deprecated(reason: ${quote(d.deprecated)})` : ''}`);
  }
  return out.length > 0 ? `(${out.join(', ')})` : '';
}

function fieldsOf(name, keep) {
  const lines = [];
  for (const p of membersOf(name) ?? []) {
    const field = p.name.getText(source);
    if (field === '__typename' || (keep !== undefined && !keep.includes(field))) continue;
    const t = typeOf(p.type);
    if (t === undefined || !allowed(t.named)) {
      if (keep !== undefined) throw new Error(`${name}.${field}: its type is not in the extract`);
      continue;
    }
    const args = argumentsOf(name, field);
    if (args === null) continue;
    const d = docOf(p);
    lines.push(`${describe(d.text, '  ')}  ${field}${args}: ${t.sdl}${d.deprecated ? ` @deprecated(reason: ${quote(d.deprecated)})` : ''}`);
  }
  return lines;
}

function inputFieldsOf(name) {
  const lines = [];
  for (const p of membersOf(name) ?? []) {
    const field = p.name.getText(source);
    const t = typeOf(p.type);
    if (t === undefined || !allowed(t.named)) {
      if (t?.sdl.endsWith('!')) throw new Error(`${name}.${field} is required but its type ${t.named} is not in the extract`);
      continue;
    }
    const d = docOf(p);
    lines.push(`${describe(d.text, '  ')}  ${field}: ${t.sdl}${d.deprecated ? ` @deprecated(reason: ${quote(d.deprecated)})` : ''}`);
  }
  return lines;
}

const blocks = [];
// Interfaces the kept objects implement (Node), fields trimmed the same way.
for (const o of OBJECTS) for (const i of implementsOf(o)) usedInterfaces.add(i);
const block = (name, head, lines) => {
  const d = aliases.get(name) ? docOf(aliases.get(name)).text : undefined;
  blocks.push(`${describe(d)}${head} {\n${lines.join('\n')}\n}`);
};
block('Query', 'type Query', fieldsOf('Query', QUERY));
block('Mutation', 'type Mutation', fieldsOf('Mutation', MUTATION));
for (const i of [...usedInterfaces].sort()) block(i, `interface ${i}`, fieldsOf(i));
for (const o of [...OBJECTS].sort()) {
  if (kindOf(o) !== 'object') throw new Error(`${o} is not an object type in ${file}`);
  const impl = implementsOf(o).filter((i) => usedInterfaces.has(i));
  block(o, `type ${o}${impl.length > 0 ? ` implements ${impl.join(' & ')}` : ''}`, fieldsOf(o));
}
for (const i of [...keptInputs].sort()) {
  if (kindOf(i) !== 'input') throw new Error(`${i} is not an input type in ${file}`);
  block(i, `input ${i}`, inputFieldsOf(i));
}
for (const e of [...usedEnums].sort()) {
  const decl = enums.get(e);
  const values = decl.members.map((m) => {
    const d = docOf(m);
    const value = m.initializer && ts.isStringLiteral(m.initializer) ? m.initializer.text : m.name.getText(source);
    return `${describe(d.text, '  ')}  ${value}${d.deprecated ? ` @deprecated(reason: ${quote(d.deprecated)})` : ''}`;
  });
  blocks.push(`${describe(docOf(decl).text)}enum ${e} {\n${values.join('\n')}\n}`);
}
for (const s of [...usedScalars].sort()) blocks.push(`${describe(scalarDocs.get(s))}scalar ${s}`);

process.stdout.write(
  `# Derived from @linear/sdk@98.0.0 (MIT, Linear Orbit, Inc.) dist/index-D2pH4Pk9.d.mts by connectors/linear/derive.mjs:\n# the part of Linear's GraphQL schema the connector uses. Do not edit; rerun the script.\n\n${blocks.join('\n\n')}\n`,
);
