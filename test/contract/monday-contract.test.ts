/**
 * Contract test: every GraphQL document the Monday manifest can render is validated with
 * graphql-js against monday's own schema for API version 2026-10 (vendored by
 * scripts/extract-monday-schema.ts), with deprecated fields counted as failures, and the
 * variables sent are coerced against their declared types. "Every document" is each action
 * rendered with its required params, with all params, with each enum value, with each optional
 * param alone (which covers every {{#if}} branch), and with each entity's sync params.
 */
import { buildSchema, getNamedType, getVariableValues, NoDeprecatedCustomRule, parse, specifiedRules, validate, typeFromAST, type GraphQLSchema, type VariableDefinitionNode, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector } from '../../src/index.ts';
import type { CompiledAction } from '../../src/manifest/index.ts';
import { MONDAY_SDL, SCHEMA_VERSION } from '../../src/sandbox/monday/schema.ts';

type Rec = Record<string, unknown>;
type ParamDef = { type?: unknown; enum?: unknown[]; pattern?: string; minimum?: number; format?: string; items?: ParamDef; required?: boolean };

/**
 * Documents the manifest deliberately leaves to monday to refuse, with the problem expected:
 * updates.update without body or state sends edit_update without its required body, which
 * monday answers with a variable error (upstream_rejected), rather than guessing a change.
 */
const EXPECTED_REFUSALS: Record<string, RegExp> = {
  'updates.update with required params': /Variable "\$body" of required type "String!" was not provided/,
};

const schema: GraphQLSchema = buildSchema(MONDAY_SDL);
const manifest = getConnector('monday');
const runtime = new ConnectorRuntime(manifest, { api_key: 'contract-test-token' }, { baseUrl: 'https://api.monday.com', limiter: null });

/** A valid value for one param, or each enum value when `all` is asked. */
function sample(def: ParamDef): unknown {
  if (def.enum !== undefined) return def.enum[0];
  switch (def.type) {
    case 'integer':
    case 'number':
      return def.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [sample(def.items ?? { type: 'string' })];
    case 'object':
      return { text: 'Acme' };
    default:
      if (def.format === 'date-time') return '2026-01-31T12:00:00Z';
      if (def.format === 'date') return '2026-01-31';
      return def.pattern === '^[0-9]+$' ? '1850000101' : 'x';
  }
}

const entityOf = (a: CompiledAction) => manifest.entities.get(a.entity)!;

/** The param sets rendered for one action. */
function paramSets(a: CompiledAction, syncParams: Rec | undefined): [string, Rec][] {
  const defs = (a.def.params ?? {}) as Record<string, ParamDef>;
  const required: Rec = {};
  for (const [k, d] of Object.entries(defs)) if (d.required === true) required[k] = sample(d);
  const all: Rec = {};
  for (const [k, d] of Object.entries(defs)) all[k] = sample(d);
  const sets: [string, Rec][] = [['required params', required], ['all params', all]];
  for (const [k, d] of Object.entries(defs)) {
    if (d.required === true) continue;
    sets.push([`required + ${k}`, { ...required, [k]: sample(d) }]);
    for (const v of d.enum ?? []) sets.push([`${k}=${String(v)}`, { ...required, [k]: v }]);
  }
  for (const [k, d] of Object.entries(defs)) if (d.required === true) for (const v of d.enum ?? []) sets.push([`${k}=${String(v)}`, { ...required, [k]: v }]);
  if (syncParams !== undefined) {
    sets.push(['sync params', { ...required, ...syncParams }]);
    const inc = entityOf(a).def.sync?.incremental;
    if (inc?.param !== undefined) sets.push(['incremental sync params', { ...required, ...syncParams, [inc.param]: '2026-01-31T12:00:00.000Z' }]);
  }
  // A list another entity's sync reads removals from (e.g. items from activity_logs).
  for (const other of manifest.entities.values()) {
    const rm = other.def.sync?.removals;
    if (a.name === 'list' && rm?.entity === a.entity) {
      const parent = other.def.sync?.for_each?.param;
      sets.push([`${other.name} sync removals`, { ...required, ...(rm.params ?? {}), [rm.since_param]: '2026-01-31T12:00:00.000Z', ...(parent ? { [parent]: '1850000101' } : {}) }]);
    }
  }
  // A next page: the cursor branch of cursor-paginated lists.
  if (defs['cursor'] !== undefined) sets.push(['next page (cursor)', { ...required, cursor: 'MSwxODUwMDAwMTAxLHRva2VuLDEwMCwzMDB8MTkwMDAwMDcwMA' }]);
  return sets;
}

/** Problems of one rendered request: invalid document, deprecated fields, mistyped variables. */
function problems(body: { query: string; variables?: Rec }): string[] {
  const doc = parse(body.query);
  const out = validate(schema, doc, [...specifiedRules, NoDeprecatedCustomRule]).map((e) => e.message);
  if (out.length > 0) return out;
  const op = doc.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
  const defs: readonly VariableDefinitionNode[] = op?.variableDefinitions ?? [];
  const coerced = getVariableValues(schema, defs, body.variables ?? {});
  if (coerced.errors !== undefined) out.push(...coerced.errors.map((e) => e.message));
  const declared = new Set(defs.map((d) => d.variable.name.value));
  for (const k of Object.keys(body.variables ?? {})) if (!declared.has(k)) out.push(`variable $${k} is sent but not declared`);
  // monday's JSON arguments (column_values, defaults) take a JSON-encoded string.
  for (const d of defs) {
    const t = typeFromAST(schema, d.type as never);
    const v = body.variables?.[d.variable.name.value];
    if (t !== undefined && getNamedType(t).name === 'JSON' && v !== undefined && v !== null) {
      if (typeof v !== 'string') out.push(`$${d.variable.name.value} must be a JSON string, got ${typeof v}`);
      else expect(() => JSON.parse(v) as unknown).not.toThrow();
    }
  }
  return out;
}

describe(`monday manifest documents validate against monday's ${SCHEMA_VERSION} schema`, () => {
  it('the manifest defaults to the version the vendored schema describes', () => {
    expect(manifest.manifest.config?.['api_version']?.default).toBe(SCHEMA_VERSION);
  });

  for (const [entityName, entity] of manifest.entities) {
    for (const [actionName, action] of entity.actions) {
      const syncParams = actionName === 'list' && entity.def.sync !== undefined ? (entity.def.sync.params ?? {}) : undefined;
      for (const [label, params] of paramSets(action, syncParams)) {
        it(`${entityName}.${actionName} with ${label}`, () => {
          const { init } = runtime.render(action, params);
          const body = JSON.parse(String(init.body)) as { query: string; variables?: Rec };
          const refusal = EXPECTED_REFUSALS[`${entityName}.${actionName} with ${label}`];
          if (refusal !== undefined) expect(problems(body).join('\n')).toMatch(refusal);
          else expect(problems(body)).toEqual([]);
          expect(init.headers['api-version']).toBe(SCHEMA_VERSION);
        });
      }
    }
  }

  it('a deprecated field or a wrong variable type is caught', () => {
    expect(problems({ query: '{ boards { columns { settings_str } } }' }).join()).toMatch(/deprecated/);
    expect(problems({ query: 'query ($e: [String]) { users(emails: $e) { id } }', variables: { e: ['a'] } }).join()).toMatch(/\[String\]/);
    expect(problems({ query: '{ users { id enabled } }' }).join()).toMatch(/Cannot query field "enabled"/);
    expect(problems({ query: 'mutation ($b: ID!, $i: String!, $c: JSON) { create_item(board_id: $b, item_name: $i, column_values: $c) { id } }', variables: { b: '1', i: 'x', c: { a: 1 } } }).join()).toMatch(/JSON string/);
    expect(problems({ query: 'query ($l: Int) { boards(limit: $l) { id } }', variables: { l: 'ten' } }).join()).toMatch(/Int/);
  });
});
