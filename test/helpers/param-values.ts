/**
 * Values for an action's params, for tests that run every action of every manifest: sampled from
 * the params' JSON Schema (openapi-sampler: enums, formats, minimums, nested objects), with the
 * sampler's placeholders replaced by realistic values named after each field (the simulators'
 * own realistic.ts), and strings a pattern constrains drawn from the pattern (faker).
 */
import { faker } from '@faker-js/faker/locale/en';
import { sample } from 'openapi-sampler';
import { paramsSchema, type LoadedManifest } from '../../src/manifest/index.ts';
import type { CompiledAction } from '../../src/manifest/index.ts';
import { realisticRecord } from '../../src/simulator/realistic.ts';

type Rec = Record<string, unknown>;
type Schema = Rec & { type?: unknown; pattern?: string; items?: Schema; properties?: Record<string, Schema>; required?: string[] };

/** A string the pattern accepts (faker's fromRegExp), trying the realistic value first. */
function patterned(value: unknown, pattern: string, seed: number): string {
  const re = new RegExp(pattern);
  if (typeof value === 'string' && re.test(value)) return value;
  faker.seed(seed);
  return faker.helpers.fromRegExp(re);
}

/** Walk the value beside its schema: a string a pattern refuses is drawn from the pattern. */
function fitPatterns(value: unknown, schema: Schema | undefined, seed: number): unknown {
  if (schema === undefined) return value;
  if (typeof schema.pattern === 'string' && (typeof value === 'string' || value === undefined)) return patterned(value, schema.pattern, seed);
  // A realistic value named after the field ("organization": a company name) where the format asks for a URI (Calendly's organization URI).
  if (schema.format === 'uri' && typeof value === 'string' && !/^https?:\/\//.test(value)) return `https://example.com/${encodeURIComponent(value)}`;
  if (Array.isArray(value)) return value.map((v) => fitPatterns(v, schema.items, seed));
  if (value !== null && typeof value === 'object' && schema.properties !== undefined) {
    const out: Rec = { ...(value as Rec) };
    for (const [k, s] of Object.entries(schema.properties)) if (k in out) out[k] = fitPatterns(out[k], s, seed);
    return out;
  }
  return value;
}

/**
 * Realistic values for `names` of the action's params (default: its required ones), as an object
 * the action's params schema accepts. `seed` varies the values between calls.
 */
export function sampleParams(manifest: LoadedManifest, action: CompiledAction, names: readonly string[] | undefined, seed: number): Rec {
  const schema = paramsSchema(action.def) as Schema;
  const props = schema.properties ?? {};
  const wanted = names ?? schema.required ?? [];
  const picked: Schema = {
    type: 'object',
    properties: Object.fromEntries(wanted.filter((n) => props[n] !== undefined).map((n) => [n, props[n]!])),
    required: [...wanted],
  };
  const sampled = sample(picked as never, { skipReadOnly: true, quiet: true }) as Rec;
  const realistic = realisticRecord(sampled, seed, manifest.type) ?? {};
  return fitPatterns(realistic, picked, seed) as Rec;
}
