/** Loading a sidecar: YAML parsed, checked against the schema, then the names it must declare. */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { parse as parseYaml } from 'yaml';
import { SIDECAR_SCHEMA } from './schema.ts';
import type { ResourceSidecar, Sidecar } from './types.ts';

/** YAML 1.2 core with merge keys (`<<: *base`), as `yaml` parses sidecars with `merge: true`. */
const SIDECAR_YAML = CORE_SCHEMA.withTags(mergeTag);

/** The sidecar's value from js-yaml (several times faster); text it refuses gets `yaml`'s error. */
function parseValue(text: string): unknown {
  try {
    return load(text, { schema: SIDECAR_YAML });
  } catch {
    return parseYaml(text, { merge: true }) as unknown;
  }
}

const validate = new Ajv({ strict: false, allErrors: true }).compile<Sidecar>(SIDECAR_SCHEMA);

/** Parse and check a sidecar; throws with every problem named. */
export function parseSidecar(text: string, source = 'sidecar'): Sidecar {
  const value = parseValue(text) ?? {};
  if (!validate(value)) {
    const problems = (validate.errors ?? []).map(
      (e) =>
        `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty: string }).additionalProperty)})` : ''}`,
    );
    throw new Error(`${source}: invalid simulator sidecar: ${problems.join('; ')}`);
  }
  // What the schema cannot check: names that must refer to something declared.
  const problems: string[] = [];
  for (const [key, rule] of Object.entries(value.search ?? {})) {
    for (const [type, symbols] of Object.entries(rule.allowed ?? {}))
      for (const sym of symbols)
        if (rule.operators[sym] === undefined) problems.push(`/search/${key}/allowed/${type} names ${sym}, which operators does not declare`);
    if (rule.date_fields !== undefined) {
      try {
        new RegExp(rule.date_fields);
      } catch {
        problems.push(`/search/${key}/date_fields is not a regular expression`);
      }
    }
  }
  for (const [name, r] of Object.entries(value.resources ?? {})) {
    for (const [field, f] of Object.entries(r.fields ?? {}))
      if ('pool' in f && value.pools?.[f.pool] === undefined)
        problems.push(`/resources/${name}/fields/${field} draws from pool ${f.pool}, which pools does not declare`);
  }
  if (problems.length > 0) throw new Error(`${source}: invalid simulator sidecar: ${problems.join('; ')}`);
  return value;
}

/** How many records a resource is seeded with: its `records`, else its `seed` list's length, else the sidecar's `records`, else 5. */
export function seedCount(sidecar: Sidecar, resource: string): number {
  const rs = sidecar.resources?.[resource];
  return rs?.records ?? (Array.isArray(rs?.seed) ? rs.seed.length : undefined) ?? sidecar.records ?? 5;
}

/** The `seed` fields of seeded record i (0-based): the seed object, or the list's i-th entry. */
export function seedOf(rs: ResourceSidecar | undefined, i: number): Record<string, unknown> | undefined {
  return Array.isArray(rs?.seed) ? (rs.seed[i] ?? {}) : rs?.seed;
}

export function loadSidecar(file: string): Sidecar {
  return parseSidecar(readFileSync(file, 'utf8'), file);
}
