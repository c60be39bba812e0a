#!/usr/bin/env node
// Derives an OpenAPI 3.1 extract of Dropbox's API v2 (files: list a folder and continue it, a
// file's or folder's metadata, create a folder, move or rename; sharing: create and list shared
// links; the current account) from Dropbox's official JavaScript SDK, the npm package `dropbox`
// (MIT, per its package.json and LICENSE). Dropbox generates that SDK from its Stone
// specifications, and keeps in it:
//   - lib/routes.js: per route, the JSDoc naming the argument, result and error types, and the
//     call `this.request('<path>', arg, '<auth>', '<host>', '<style>', '<scope>')`: the path (under
//     https://<host>.dropboxapi.com/2/, per src/utils.js baseApiUrl), the style (rpc: a POST of the
//     JSON argument, or of no body when the route takes none, per src/dropbox.js) and the OAuth
//     scope the route needs;
//   - types/dropbox_types.d.ts: every argument, result and error type, by namespace (files.,
//     sharing., users.), with JSDoc; a Stone union is a TypeScript union of interfaces tagged by
//     `.tag`, a struct with subtypes an interface extended by `<Type>Reference` ones carrying the tag.
// This script reads exactly that back into OpenAPI with the TypeScript compiler API, for the routes
// connectors/dropbox uses: OUR derivation, not Dropbox's own description (Dropbox publishes none as
// OpenAPI). An interface's inherited fields are written into it; a union is an `anyOf` (Stone's
// subtype references overlap: a shared link's `.tag` is "file" in both FileLinkMetadataReference
// and SharedLinkMetadataReference); TypeScript's `number` is written `integer` (Stone's UInt32 and
// UInt64: sizes, limits), except the few Float64 fields named in FLOATS.
// What the SDK does not type is added and marked x-added-by: the error bodies (the SDK hands on
// `{error_summary, error, user_message}` as is, its `Error<T>` interface: an endpoint's own error
// with 409, an expired or invalid token with 401, a rate limit with 429 and `Retry-After`; a
// malformed argument is 400 with a text body) and the OAuth 2 flows (src/utils.js's
// https://www.dropbox.com/oauth2/authorize and https://api.dropboxapi.com/oauth2/token, the
// scopes from the routes' JSDoc).
//
//   d=$(mktemp -d) && (cd "$d" && npm pack dropbox@10.34.0 && tar xzf dropbox-10.34.0.tgz)
//   node connectors/dropbox/derive.mjs "$d" > connectors/dropbox/openapi.json
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const dir = process.argv[2];
const pkg = dir && join(dir, 'package');
if (!pkg || !existsSync(join(pkg, 'types/dropbox_types.d.ts')) || !existsSync(join(pkg, 'lib/routes.js'))) {
  process.stderr.write('usage: derive.mjs <folder holding package/ (dropbox unpacked)>\n');
  process.exit(2);
}
const fail = (msg) => {
  throw new Error(`derive.mjs: ${msg}`);
};
const read = (...p) => readFileSync(join(pkg, ...p), 'utf8');
const clientVersion = JSON.parse(read('package.json')).version;
const ADDED = 'derive.mjs, from Dropbox API documentation (dropbox.com/developers/documentation/http/documentation: errors, OAuth guide)';

/** The routes the connector uses, by the SDK's method name. */
const USED = [
  'filesListFolder',
  'filesListFolderContinue',
  'filesGetMetadata',
  'filesCreateFolderV2',
  'filesMoveV2',
  'sharingCreateSharedLinkWithSettings',
  'sharingListSharedLinks',
  'usersGetCurrentAccount',
];
/** Stone Float64 fields (TypeScript `number` everywhere else is an integer in Stone). */
const FLOATS = new Set(['files.GpsCoordinates.latitude', 'files.GpsCoordinates.longitude']);

// --- the type declarations, by qualified name ---------------------------------------------------
const source = ts.createSourceFile('dropbox_types.d.ts', read('types/dropbox_types.d.ts'), ts.ScriptTarget.Latest, true);
/** `ns.Name` → declaration (interface or type alias); top-level ones (Timestamp) by their name alone. */
const decls = new Map();
for (const stmt of source.statements) {
  if (ts.isModuleDeclaration(stmt) && stmt.body && ts.isModuleBlock(stmt.body)) {
    for (const d of stmt.body.statements) if (ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d)) decls.set(`${stmt.name.text}.${d.name.text}`, d);
  } else if (ts.isInterfaceDeclaration(stmt) || ts.isTypeAliasDeclaration(stmt)) decls.set(stmt.name.text, stmt);
}

const docOf = (node) => {
  const text = ts
    .getJSDocCommentsAndTags(node)
    .map((d) => (typeof d.comment === 'string' ? d.comment : ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .replace(/\[([^\]]+)\]\{@link ([^}]+)\}/g, '$1 ($2)')
    .trim();
  return text === '' ? undefined : text;
};

/** The qualified name a type reference in namespace `ns` names. */
function resolve(ns, name) {
  if (name.includes('.')) return decls.has(name) ? name : fail(`unknown type ${name}`);
  if (decls.has(`${ns}.${name}`)) return `${ns}.${name}`;
  if (decls.has(name)) return name;
  return fail(`unknown type ${name} in ${ns}`);
}
const schemaName = (q) =>
  q
    .split(/[._]/)
    .map((p) => p[0].toUpperCase() + p.slice(1))
    .join('');

const schemas = {};
/** A named type as a $ref (written to components/schemas), or inlined when it is a plain alias of a primitive. */
function named(q) {
  const d = decls.get(q);
  const ns = q.includes('.') ? q.split('.')[0] : '';
  // Stone's Timestamp: ISO 8601 in UTC, to the second (2015-05-12T15:50:38Z).
  if (q === 'Timestamp') return { type: 'string', format: 'date-time' };
  if (ts.isTypeAliasDeclaration(d)) {
    const t = d.type;
    const primitive = t.kind === ts.SyntaxKind.StringKeyword || t.kind === ts.SyntaxKind.NumberKeyword || t.kind === ts.SyntaxKind.BooleanKeyword;
    if (primitive || ts.isTypeReferenceNode(t)) return withDoc(typeSchema(ns, t, q), docOf(d));
  }
  const key = schemaName(q);
  if (!(key in schemas)) {
    schemas[key] = {}; // recursion guard
    schemas[key] = ts.isInterfaceDeclaration(d) ? objectSchema(ns, d) : withDoc(typeSchema(ns, d.type, q), docOf(d));
  }
  return { $ref: `#/components/schemas/${key}` };
}
const withDoc = (s, description) => (description === undefined || s.$ref ? s : { ...s, description });

/** An interface, its inherited fields written in (the base's first). */
function objectSchema(ns, d) {
  const properties = {};
  const required = [];
  for (const h of d.heritageClauses ?? []) {
    for (const t of h.types) {
      const base = objectSchema(ns.length ? ns : '', decls.get(resolve(ns, t.expression.getText(source))));
      Object.assign(properties, base.properties);
      required.push(...(base.required ?? []));
    }
  }
  const q = `${ns}.${d.name.text}`;
  for (const m of d.members) {
    if (!ts.isPropertySignature(m)) continue;
    const name = m.name.getText(source).replace(/^'|'$/g, '');
    let s = FLOATS.has(`${q}.${name}`) ? { type: 'number' } : typeSchema(ns, m.type, q);
    properties[name] = withDoc(s, docOf(m));
    if (!m.questionToken && !required.includes(name)) required.push(name);
  }
  const out = { type: 'object', properties };
  if (required.length) out.required = required;
  const description = docOf(d);
  return description ? { ...out, description } : out;
}

/** A type node as JSON Schema. */
function typeSchema(ns, t, where) {
  switch (t.kind) {
    case ts.SyntaxKind.StringKeyword:
      return { type: 'string' };
    case ts.SyntaxKind.NumberKeyword:
      return { type: 'integer' };
    case ts.SyntaxKind.BooleanKeyword:
      return { type: 'boolean' };
    case ts.SyntaxKind.VoidKeyword:
    case ts.SyntaxKind.AnyKeyword:
      return {};
  }
  if (ts.isLiteralTypeNode(t) && ts.isStringLiteral(t.literal)) return { type: 'string', enum: [t.literal.text] };
  if (ts.isArrayTypeNode(t)) return { type: 'array', items: typeSchema(ns, t.elementType, where) };
  if (ts.isParenthesizedTypeNode(t)) return typeSchema(ns, t.type, where);
  if (ts.isUnionTypeNode(t)) {
    const alts = t.types.map((a) => typeSchema(ns, a, where));
    if (alts.every((a) => a.type === 'string' && a.enum)) return { type: 'string', enum: alts.flatMap((a) => a.enum) };
    return { anyOf: alts };
  }
  if (ts.isTypeReferenceNode(t)) {
    const name = t.typeName.getText(source);
    if (name === 'Array') return { type: 'array', items: typeSchema(ns, t.typeArguments[0], where) };
    if (name === 'Object') return { type: 'object' };
    return named(resolve(ns, name));
  }
  return fail(`${where}: type ${t.getText(source)} not understood`);
}

// --- the routes ---------------------------------------------------------------------------------
const routesJs = read('lib/routes.js');
const scopes = new Set();
const paths = {};
const errorBody = (errorSchema) => ({
  type: 'object',
  required: ['error_summary', 'error'],
  properties: {
    error_summary: { type: 'string', description: 'The error tags joined by "/" with a trailing "/..": path/not_found/..' },
    error: errorSchema,
    user_message: { type: 'object', properties: { text: { type: 'string' }, locale: { type: 'string' } } },
  },
});
for (const method of USED) {
  const m = new RegExp(
    `/\\*\\*\\n((?:\\s\\*.*\\n)+?)\\s\\*/\\nroutes\\.${method} = function \\((arg)?\\) \\{\\n\\s+return this\\.request\\('([^']+)', (?:arg|null), '([^']+)', '(\\w+)', '(\\w+)', (?:'([^']+)'|null)\\);`,
  ).exec(routesJs);
  if (!m) fail(`${method}: no route in lib/routes.js`);
  const [, jsdoc, takesArg, path, , host, style, scope] = m;
  if (host !== 'api' || style !== 'rpc') fail(`${method}: ${host}/${style} is not an RPC route on the api host`);
  const lines = jsdoc.split('\n').map((l) => l.replace(/^\s\*\s?/, ''));
  const typeOf = (tag) => lines.find((l) => l.startsWith(tag));
  const argType = /\{(\w+)\}/.exec(typeOf('@arg') ?? '')?.[1];
  const returns = /DropboxResponse<\(?([\w|]+)\)?>, DropboxResponseError\.<(\w+)>/.exec(typeOf('@returns') ?? '') ?? fail(`${method}: no @returns`);
  const description = lines
    .slice(
      0,
      lines.findIndex((l) => l.startsWith('Route attributes:') || l.startsWith('@')),
    )
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  /** The SDK's flat type name (FilesListFolderArg) → the declaration's (files.ListFolderArg). */
  const q = (flat) => {
    if (flat === 'void' || flat === 'Object') return undefined;
    const hit = [...decls.keys()].find((k) => k.includes('.') && schemaName(k) === flat);
    return hit ?? fail(`${method}: no declaration for ${flat}`);
  };
  const results = returns[1].split('|').map(q);
  const result = results.length === 1 ? named(results[0]) : { anyOf: results.map(named) };
  const err = q(returns[2]);
  if (scope) scopes.add(scope);
  const security = [{ oauth2: scope ? [scope] : [] }, { bearer: [] }];
  const op = {
    operationId: method,
    summary: description.split(/(?<=\.) /)[0],
    description,
    security,
    ...(takesArg && argType ? { requestBody: { required: true, content: { 'application/json': { schema: named(q(argType)) } } } } : {}),
    responses: {
      200: { description: 'Success', content: { 'application/json': { schema: result } } },
      400: {
        description: 'Bad input: the argument is malformed (a text body)',
        'x-added-by': ADDED,
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      401: {
        description: 'The token is missing, invalid or expired',
        'x-added-by': ADDED,
        content: { 'application/json': { schema: errorBody(named('auth.AuthError')) } },
      },
      409: {
        description: 'An endpoint-specific error',
        'x-added-by': ADDED,
        content: { 'application/json': { schema: errorBody(err ? named(err) : {}) } },
      },
      429: {
        description: 'Too many requests; Retry-After says when to try again',
        'x-added-by': ADDED,
        headers: { 'Retry-After': { schema: { type: 'integer' } } },
        content: { 'application/json': { schema: errorBody(named('auth.RateLimitError')) } },
      },
    },
  };
  paths[`/${path}`] = { post: op };
}

const spec = {
  openapi: '3.1.0',
  info: {
    title: 'Dropbox API v2 (files and sharing extract)',
    version: '2',
    description: `OUR derivation (Switchboard's derive.mjs), not Dropbox's own description: read from the official JavaScript SDK, npm:dropbox@${clientVersion} (lib/routes.js and types/dropbox_types.d.ts, generated by Dropbox from its Stone specifications), for the routes connectors/dropbox uses. Additions marked x-added-by.`,
    license: { name: 'MIT', identifier: 'MIT' },
    'x-derived-from': `npm:dropbox@${clientVersion}`,
  },
  servers: [{ url: 'https://api.dropboxapi.com/2' }],
  paths,
  components: {
    securitySchemes: {
      oauth2: {
        type: 'oauth2',
        'x-added-by': ADDED,
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://www.dropbox.com/oauth2/authorize',
            tokenUrl: 'https://api.dropboxapi.com/oauth2/token',
            refreshUrl: 'https://api.dropboxapi.com/oauth2/token',
            scopes: Object.fromEntries([...scopes].sort().map((s) => [s, `the ${s} scope`])),
          },
        },
      },
      bearer: { type: 'http', scheme: 'bearer', description: 'A generated access token (App Console) or an OAuth access token', 'x-added-by': ADDED },
    },
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
  },
};
process.stdout.write(`${JSON.stringify(spec, null, 2)}\n`);
