/**
 * Contract test, one suite for every connector: each request any action of any manifest can
 * render is checked against the vendor's own description that the manifest names in
 * `vendor_description` (vendored beside it, trimmed by a script in scripts/extract-*).
 *
 * "Every request" is each action rendered with its required params, with all params, with each
 * enum value, with each optional param alone (which covers every {{#if}} branch), with the
 * entity's sync and incremental-sync params, with the params another entity's sync reads
 * removals with, and with a next-page cursor.
 *
 * - openapi: the request's method and path must name an operation of the description, and its
 *   path, query and header parameters, credentials and JSON body must be valid for it (the same
 *   checks the generic simulator makes, src/simulator/description.ts).
 * - graphql: the document must validate against the SDL with deprecated fields counted as
 *   failures, and the variables must coerce to their declared types (JSON arguments as strings).
 *
 * A manifest that drifts from its vendor fails here. Connectors whose vendor publishes no
 * description are listed, with the reason, as skipped.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  buildSchema,
  getNamedType,
  getVariableValues,
  NoDeprecatedCustomRule,
  parse,
  specifiedRules,
  typeFromAST,
  validate,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type VariableDefinitionNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime, connectorRegistry } from '../../src/index.ts';
import type { CompiledAction, CompiledAuthVariant, LoadedManifest } from '../../src/manifest/index.ts';
import { manifestFiles } from '../../src/manifest/registry.ts';
import { Description, loadDescriptionSync, loadSidecar, type Sidecar } from '../../src/simulator/index.ts';
import { serverBasePath } from '../../src/simulator/openapi/schema.ts';

type Rec = Record<string, unknown>;
type ParamDef = {
  type?: unknown;
  enum?: unknown[];
  examples?: unknown[];
  pattern?: string;
  minimum?: number;
  minLength?: number;
  format?: string;
  items?: ParamDef;
  required?: boolean | string[];
  properties?: Record<string, ParamDef>;
  additionalProperties?: unknown;
  oneOf?: ParamDef[];
  anyOf?: ParamDef[];
};
interface VendorDescription {
  path: string;
  format: 'openapi' | 'graphql';
  source: string;
  licence: string;
}

/** Connectors whose vendor publishes no machine-readable description: why, for the skip. */
const NO_DESCRIPTION: Record<string, string> = {};

/**
 * Requests a manifest deliberately leaves to the vendor to refuse, with the problem expected:
 * monday's updates.update without body or state sends edit_update without its required body,
 * which monday answers with a variable error (upstream_rejected), rather than guessing a change.
 */
const EXPECTED_REFUSALS: Record<string, RegExp> = {
  'monday updates.update with required params': /Variable "\$body" of required type "String!" was not provided/,
  // Neither page_id nor discussion_id: requires_any refuses it (invalid_params) before it is sent.
  'notion comments.create with required params': /POST \/comments: parent is a required parameter/,
};

/** A next-page cursor of each connector's own form (the manifest reads them back with its helpers). */
const NEXT_CURSOR: Record<string, string> = {
  monday: 'MSwxODUwMDAwMTAxLHRva2VuLDEwMCwzMDB8MTkwMDAwMDcwMA',
  // Pages by the id of the page's last message or guild (a snowflake).
  discord: '1163421849870925824',
};

/**
 * A valid value for one param. Ids are digits: the vendors' ids are numeric (monday, Intercom
 * conversations and admins) or opaque strings, and a manifest that takes any string id leaves a
 * malformed one to the vendor's 404 (test/connectors/intercom.test.ts relies on that).
 */
function sample(def: ParamDef, name = ''): unknown {
  // A param typed loosely over a union the vendor spells out (Notion's page parent, property
  // values, blocks) shows a valid value in its examples: that one.
  if (Array.isArray(def.examples) && def.examples.length > 0) return def.examples[0];
  // An id whose pattern rules digits out (Granola's not_ ids) takes the pattern's simplest value.
  if (
    (name === 'id' || name.endsWith('_id')) &&
    def.enum === undefined &&
    (def.type === 'string' || def.type === undefined) &&
    (def.pattern === undefined || new RegExp(def.pattern).test('1850000101'))
  )
    return '1850000101';
  if (def.enum !== undefined) return def.enum[0];
  // One of several shapes (a comment's pin: {x, y} or {node_id, node_offset}): the first.
  const alternatives = def.oneOf ?? def.anyOf;
  if (alternatives?.[0] !== undefined && def.properties === undefined) return sample({ type: def.type, ...alternatives[0] }, name);
  switch (Array.isArray(def.type) ? def.type.find((t) => t !== 'null') : def.type) {
    case 'integer':
    case 'number':
      return def.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [sample(def.items ?? { type: 'string' })];
    case 'object': {
      // An object with declared fields gets its required ones (GitHub's issue_field_values items),
      // else every declared one (HubSpot's associations: {to: {id}, types: [...]}).
      const props = (def as { properties?: Record<string, ParamDef> }).properties;
      const req = (def as { required?: unknown }).required;
      // A map (additionalProperties: <schema>): one entry of that schema (Okta's app profile, a visibility's appLinks: {name: boolean}).
      const values = def.additionalProperties;
      if (props === undefined) return { text: values !== null && typeof values === 'object' ? sample(values as ParamDef) : 'Acme' };
      const names = Array.isArray(req) && req.length > 0 ? (req as string[]) : Object.keys(props);
      return Object.fromEntries(names.filter((k) => props[k] !== undefined).map((k) => [k, sample(props[k] as ParamDef, k)]));
    }
    default:
      if (def.format === 'date-time') return '2026-01-31T12:00:00Z';
      if (def.format === 'date') return '2026-01-31';
      // A value the param's pattern accepts: digits, a Slack-like ts or id, else a plain word.
      if (def.pattern === undefined) return 'x'.repeat(Math.max(1, def.minLength ?? 1));
      return (
        ['1850000101', '1850000101.000100', 'C1850000101', 'x', 'x-1', fromPattern(def.pattern)].find((v) => new RegExp(def.pattern as string).test(v)) ?? 'x'
      );
  }
}

/**
 * The simplest text a plain pattern (literals, character classes, quantifiers) accepts: each
 * class gives its first character, repeated as its quantifier's least count (Granola's
 * `^not_[A-Za-z0-9]{14}$` → `not_AAAAAAAAAAAAAA`).
 */
function fromPattern(pattern: string): string {
  let out = '';
  const re = /\\(.)|\[\^?(.)[^\]]*\]|([^^$\\[{}+*?])|\{(\d+)(?:,\d*)?\}|([+?*])/g;
  let last = '';
  for (const m of pattern.matchAll(re)) {
    if (m[4] !== undefined) out += last.repeat(Number(m[4]) - 1);
    else if (m[5] !== undefined) out = m[5] === '+' ? out : out.slice(0, out.length - last.length);
    else out += last = m[1] ?? m[2] ?? m[3] ?? '';
  }
  return out;
}

/** A since value as the sync engine writes it for the format (ISO 8601 by default). */
const since = (format: string | undefined): string | number =>
  format === 'unix_seconds' ? 1769860800 : format === 'unix_ms' ? 1769860800000 : format === 'date' ? '2026-01-31' : '2026-01-31T12:00:00.000Z';

/** The param sets rendered for one action of a manifest. */
function paramSets(m: LoadedManifest, a: CompiledAction, syncParams: Rec | undefined): [string, Rec][] {
  const defs = (a.def.params ?? {}) as Record<string, ParamDef>;
  const required: Rec = {};
  for (const [k, d] of Object.entries(defs)) if (d.required === true) required[k] = sample(d, k);
  const all: Rec = {};
  for (const [k, d] of Object.entries(defs)) all[k] = sample(d, k);
  const sets: [string, Rec][] = [
    ['required params', required],
    ['all params', all],
  ];
  for (const [k, d] of Object.entries(defs)) {
    if (d.required === true) continue;
    sets.push([`required + ${k}`, { ...required, [k]: sample(d, k) }]);
    for (const v of d.enum ?? []) sets.push([`${k}=${String(v)}`, { ...required, [k]: v }]);
  }
  for (const [k, d] of Object.entries(defs)) if (d.required === true) for (const v of d.enum ?? []) sets.push([`${k}=${String(v)}`, { ...required, [k]: v }]);
  const entity = m.entities.get(a.entity);
  if (syncParams !== undefined) {
    sets.push(['sync params', { ...required, ...syncParams }]);
    const inc = entity?.def.sync?.incremental;
    // A raw mark is the cursor field's own value: a value of the param's own form.
    const mark =
      inc?.format === 'raw' && inc.param !== undefined && defs[inc.param] !== undefined ? sample(defs[inc.param] as ParamDef, inc.param) : since(inc?.format);
    if (inc?.param !== undefined && inc.action === undefined) sets.push(['incremental sync params', { ...required, ...syncParams, [inc.param]: mark }]);
  }
  // The sync-only action an incremental sync calls, with its since param.
  const inc = entity?.def.sync?.incremental;
  if (inc?.action === a.name && inc.param !== undefined) {
    const mark = inc.format === 'raw' && defs[inc.param] !== undefined ? sample(defs[inc.param] as ParamDef, inc.param) : since(inc.format);
    sets.push(['incremental sync params', { ...required, ...(inc.params ?? {}), [inc.param]: mark }]);
  }
  // A list another entity's sync reads removals from (monday's items from activity_logs).
  for (const other of m.entities.values()) {
    const rm = other.def.sync?.removals;
    if (a.name === 'list' && rm?.entity === a.entity) {
      const parent = other.def.sync?.for_each?.param;
      sets.push([
        `${other.name} sync removals`,
        {
          ...required,
          ...(rm.params ?? {}),
          ...(rm.since_param !== undefined ? { [rm.since_param]: since(rm.format) } : {}),
          ...(parent ? { [parent]: '1850000101' } : {}),
        },
      ]);
    }
  }
  // A next page: the cursor branch of cursor-paginated lists, with a cursor of the connector's form.
  const pag = a.def.pagination as { type?: string; param?: string } | undefined;
  const cursorParam = pag?.param ?? (defs['cursor'] !== undefined ? 'cursor' : undefined);
  if (cursorParam !== undefined && defs[cursorParam] !== undefined) {
    // A page number for page pagination, a position for integer cursors; else a cursor of the connector's form (default: cursor_encode 2).
    // An integer cursor param (offset pagination, Jira's startAt) takes a position.
    const numeric = pag?.type === 'page' || pag?.type === 'offset' || defs[cursorParam]?.type === 'integer';
    const cursor = numeric ? 2 : (NEXT_CURSOR[m.type] ?? Buffer.from(JSON.stringify(2)).toString('base64url'));
    sets.push([`next page (${cursorParam})`, { ...required, [cursorParam]: cursor }]);
  }
  return sets;
}

/** Problems of a rendered GraphQL request: invalid document, deprecated fields, mistyped variables. */
function graphqlProblems(schema: GraphQLSchema, body: { query: string; variables?: Rec }): string[] {
  const doc = parse(body.query);
  const out = validate(schema, doc, [...specifiedRules, NoDeprecatedCustomRule]).map((e) => e.message);
  if (out.length > 0) return out;
  const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const defs: readonly VariableDefinitionNode[] = op?.variableDefinitions ?? [];
  const coerced = getVariableValues(schema, defs, body.variables ?? {});
  if (coerced.errors !== undefined) out.push(...coerced.errors.map((e) => e.message));
  const declared = new Set(defs.map((d) => d.variable.name.value));
  for (const k of Object.keys(body.variables ?? {})) if (!declared.has(k)) out.push(`variable $${k} is sent but not declared`);
  // JSON arguments (monday's column_values, defaults) take a JSON-encoded string.
  for (const d of defs) {
    const t = typeFromAST(schema, d.type as never);
    const v = body.variables?.[d.variable.name.value];
    if (t !== undefined && getNamedType(t).name === 'JSON' && v !== undefined && v !== null) {
      if (typeof v !== 'string') out.push(`$${d.variable.name.value} must be a JSON string, got ${typeof v}`);
      else
        try {
          JSON.parse(v);
        } catch {
          out.push(`$${d.variable.name.value} is not valid JSON`);
        }
    }
  }
  return out;
}

/** Problems of a rendered HTTP request against an OpenAPI description. */
function openapiProblems(
  d: Description,
  basePath: string,
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string,
  credentialParams?: readonly string[],
): string[] {
  const path = url.pathname.startsWith(basePath) ? url.pathname.slice(basePath.length) || '/' : url.pathname;
  const matched = d.match(method, path);
  if (!('op' in matched)) return [`${method} ${path}: ${matched.message}`];
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const checked = d.checkRequest(
    matched.op,
    { pathParams: matched.pathParams, query: url.searchParams, headers: lower, rawBody: body },
    { unknownQuery: 'reject', credentialParams },
  );
  return 'status' in checked ? [`${matched.op.key}: ${checked.message}`] : [];
}

/** The simulator sidecar beside a manifest, if any: its sample credentials and credential params. */
function sidecarOf(m: LoadedManifest): Sidecar | undefined {
  const file = join(dirname(m.file), 'simulator.yaml');
  return existsSync(file) ? loadSidecar(file) : undefined;
}

/** A throwaway RSA key for variants that sign a JWT (minted_bearer); generated, never committed. */
let throwawayPem: string | undefined;
const rsaPem = (): string =>
  (throwawayPem ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());

/**
 * Credentials: by default the sidecar's sample credentials (they match a variant's patterns);
 * for a given variant (or without a sample), its fields filled with values their patterns accept,
 * a JWT's key field with a throwaway RSA key.
 */
function credentials(m: LoadedManifest, variant?: CompiledAuthVariant): Rec {
  if (variant === undefined) {
    const sample = sidecarOf(m)?.sandbox?.credentials;
    if (sample !== undefined) return sample;
  }
  const v = variant ?? m.auth[0];
  const fields = (v?.def.fields ?? {}) as Record<string, { pattern?: string } | undefined>;
  const keyFields = new Set((v?.mint?.privateKey.references ?? []).filter(([root]) => root === 'credentials').map(([, k]) => k));
  return Object.fromEntries(
    Object.entries(fields).map(([f, def]) => {
      if (keyFields.has(f)) return [f, rsaPem()];
      const candidates = [`contract-test-${f}`, '1', 'a', 'a1', 'contract-test'];
      const re = def?.pattern !== undefined ? new RegExp(`^(?:${def.pattern})$`, 'u') : undefined;
      return [f, candidates.find((c) => re === undefined || re.test(c)) ?? `contract-test-${f}`];
    }),
  );
}

// Every manifest of the registry, with or without a description (so a new one cannot be forgotten).
const manifests = [...connectorRegistry().values()];

describe('contract: every manifest names its vendor description, or why there is none', () => {
  it('covers every connector in connectors/', () => {
    expect(manifests.map((m) => m.type).sort()).toEqual(
      manifestFiles()
        .map((f) => f.split(/[\\/]/).at(-2))
        .sort(),
    );
    for (const m of manifests) {
      const vd = (m.manifest as { vendor_description?: VendorDescription }).vendor_description;
      expect(vd !== undefined || NO_DESCRIPTION[m.type] !== undefined, `${m.type} has no vendor_description and no reason in NO_DESCRIPTION`).toBe(true);
    }
  });
});

for (const m of manifests) {
  const vd = (m.manifest as { vendor_description?: VendorDescription }).vendor_description;
  if (vd === undefined) {
    describe.skip(`contract: ${m.type} — ${NO_DESCRIPTION[m.type] ?? 'no vendor_description'}`, () => {
      it('has no description to check against', () => undefined);
    });
    continue;
  }
  const file = join(dirname(m.file), vd.path);
  describe(`contract: ${m.type} requests validate against ${vd.path} (${vd.format}, ${vd.source}; licence: ${vd.licence})`, () => {
    const runtime = new ConnectorRuntime(m, credentials(m) as never, { limiter: null });
    const base = new URL(m.manifest.base_url.default);
    const text = readFileSync(file, 'utf8');
    const schema = vd.format === 'graphql' ? buildSchema(text) : undefined;
    const description = vd.format === 'openapi' ? new Description(loadDescriptionSync(file)) : undefined;
    // A base URL whose path names the account (/v2.1/accounts/{{credentials.account_id}}, every
    // path's prefix in the description): only the description's server path is the base.
    const basePath = decodeURIComponent(base.pathname).includes('{{') ? serverBasePath(description?.doc ?? {}) : base.pathname.replace(/\/$/, '');
    // Parameters the description declares for the credential (Slack's token), which the Authorization header carries.
    const credentialParams = sidecarOf(m)?.auth?.params;

    for (const [entityName, entity] of m.entities) {
      for (const [actionName, action] of entity.actions) {
        // Templates over the credentials ({{credentials.team_id}}) rendered as a sync renders them.
        const syncParams = actionName === 'list' && entity.def.sync !== undefined ? runtime.fixedParams(entity.def.sync.params) : undefined;
        for (const [label, params] of paramSets(m, action, syncParams)) {
          const name = `${m.type} ${entityName}.${actionName} with ${label}`;
          it(name, () => {
            const { url, init } = runtime.render(action, params);
            const body = typeof init.body === 'string' ? init.body : '';
            const found =
              schema !== undefined
                ? graphqlProblems(schema, JSON.parse(body) as { query: string; variables?: Rec })
                : openapiProblems(
                    description as Description,
                    basePath,
                    init.method ?? 'GET',
                    new URL(url),
                    init.headers as Record<string, string>,
                    body,
                    credentialParams,
                  );
            const refusal = EXPECTED_REFUSALS[name];
            if (refusal !== undefined) expect(found.join('\n')).toMatch(refusal);
            else expect(found).toEqual([]);
          });
        }
      }
    }

    // Credential checks are requests too: the manifest's (with the sample credentials and the
    // variant they are of: Slack's are its oauth variant's, not its first) and each auth variant's
    // own (with that variant's).
    const sample = credentials(m);
    const sampleVariant = m.auth.find((v) => Object.keys(sample).every((f) => f in v.def.fields)) ?? m.auth[0]!;
    const checks = [
      ...(m.check !== undefined ? [['check', m.check, sampleVariant] as const] : []),
      ...m.auth.flatMap((v) => (v.check !== undefined ? [[`auth ${v.def.name} check`, v.check, v] as const] : [])),
      // A minted_bearer variant's mint request (the JWT is sent as the bearer token); not one on
      // a token host of its own (mint.base_url: an OAuth server's JWT grant, outside the API's description).
      ...m.auth.flatMap((v) =>
        v.mint !== undefined && v.mint.baseUrl === undefined ? [[`auth ${v.def.name} mint`, { action: v.mint.action }, v] as const] : [],
      ),
    ];
    for (const [label, check, variant] of checks) {
      it(`${m.type} ${label}`, () => {
        const creds = variant === sampleVariant ? sample : credentials(m, variant);
        const rt = new ConnectorRuntime(m, creds as never, { limiter: null, authVariant: variant.def.name });
        const { url, init } = rt.render(check.action, {});
        const body = typeof init.body === 'string' ? init.body : '';
        const found =
          schema !== undefined
            ? graphqlProblems(schema, JSON.parse(body) as { query: string; variables?: Rec })
            : openapiProblems(description as Description, basePath, init.method ?? 'GET', new URL(url), init.headers as Record<string, string>, body);
        expect(found).toEqual([]);
      });
    }
  });
}

describe('contract: the checks catch drift', () => {
  it('monday: the manifest asks for the API version the vendored schema describes', () => {
    const monday = manifests.find((m) => m.type === 'monday') as LoadedManifest;
    const version = /schema-(\d{4}-\d{2})\.graphql$/.exec((monday.manifest as { vendor_description: VendorDescription }).vendor_description.path)?.[1];
    expect(monday.manifest.config?.['api_version']?.default).toBe(version);
    const { init } = new ConnectorRuntime(monday, credentials(monday) as never, { limiter: null }).render(
      monday.entities.get('boards')!.actions.get('list')!,
      {},
    );
    expect(init.headers['api-version']).toBe(version);
  });

  it('graphql: a deprecated field, an unknown field or a wrong variable type fails', () => {
    const monday = manifests.find((m) => m.type === 'monday') as LoadedManifest;
    const vd = (monday.manifest as { vendor_description: VendorDescription }).vendor_description;
    const schema = buildSchema(readFileSync(join(dirname(monday.file), vd.path), 'utf8'));
    expect(graphqlProblems(schema, { query: '{ boards { columns { settings_str } } }' }).join()).toMatch(/deprecated/);
    expect(graphqlProblems(schema, { query: 'query ($e: [String]) { users(emails: $e) { id } }', variables: { e: ['a'] } }).join()).toMatch(/\[String\]/);
    expect(graphqlProblems(schema, { query: '{ users { id enabled } }' }).join()).toMatch(/Cannot query field "enabled"/);
    expect(
      graphqlProblems(schema, {
        query: 'mutation ($b: ID!, $i: String!, $c: JSON) { create_item(board_id: $b, item_name: $i, column_values: $c) { id } }',
        variables: { b: '1', i: 'x', c: { a: 1 } },
      }).join(),
    ).toMatch(/JSON string/);
  });

  it('openapi: an unknown path, a wrong method, a bad body, an unknown or mistyped query param, or no credentials fails', () => {
    const intercom = manifests.find((m) => m.type === 'intercom') as LoadedManifest;
    const vd = (intercom.manifest as { vendor_description: VendorDescription }).vendor_description;
    const d = new Description(loadDescriptionSync(join(dirname(intercom.file), vd.path)));
    const auth = { authorization: 'Bearer t' };
    const u = (p: string): URL => new URL(p, 'https://api.intercom.io');
    expect(openapiProblems(d, '', 'GET', u('/contacts?per_page=5'), auth, '')).toEqual([]);
    expect(openapiProblems(d, '', 'GET', u('/leads'), auth, '').join()).toMatch(/No operation/);
    expect(openapiProblems(d, '', 'DELETE', u('/tags'), auth, '').join()).toMatch(/DELETE is not allowed/);
    expect(openapiProblems(d, '', 'POST', u('/contacts'), auth, JSON.stringify({ email: 42 })).join()).toMatch(/email must be string/);
    expect(openapiProblems(d, '', 'GET', u('/contacts?perPage=5'), auth, '').join()).toMatch(/unknown query parameter perPage/);
    expect(openapiProblems(d, '', 'GET', u('/contacts?per_page=500'), auth, '').join()).toMatch(/per_page must be <= 150/);
    expect(openapiProblems(d, '', 'GET', u('/contacts'), {}, '').join()).toMatch(/credentials required/);
  });
});
