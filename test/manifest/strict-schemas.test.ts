/**
 * The loader decides whether an embedded schema (record, params, credentials) is valid under
 * ajv's strictSchema by walking it (src/manifest/checks/json-schema.ts) rather than by having ajv
 * write a validator it then drops. The walk must answer as ajv's compile does: here on every
 * schema of every connector, and on schemas made to be refused.
 */
import { describe, expect, it } from 'vitest';
import { connectorRegistry } from '../../src/index.ts';
import { createAjv, credentialsSchema, paramsSchema } from '../../src/manifest/index.ts';
import { strictlyValid } from '../../src/manifest/checks/json-schema.ts';

const ajv = createAjv({ strictSchema: true, validateFormats: true, allErrors: false, messages: false, code: { optimize: false } });
function compiles(schema: object): boolean {
  try {
    ajv.compile(schema);
    return true;
  } catch {
    return false;
  }
}

const CRAFTED: [string, object][] = [
  ['a key that is no keyword, deep in items', { type: 'object', properties: { a: { type: 'array', items: { type: 'string', b: 1 } } } }],
  ['a key that is no keyword, in anyOf', { anyOf: [{ type: 'string' }, { type: 'integer', ' b': 'c' }] }],
  ['an unknown format', { type: 'object', properties: { at: { type: 'string', format: 'date-tim' } } }],
  ['a known format', { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } }],
  ['a type that is no type', { type: 'object', properties: { a: { type: 'strnig' } } }],
  ['required as a string', { type: 'object', required: 'a' }],
  ['an empty enum', { type: 'string', enum: [] }],
  ['a pattern that is no unicode regular expression', { type: 'string', pattern: '\\-' }],
  ['a pattern', { type: 'string', pattern: '^[a-z]+$' }],
  ['nullable without type', { nullable: true }],
  ['nullable with type', { type: 'string', nullable: true }],
  ['a reference that resolves nowhere', { type: 'object', properties: { a: { $ref: '#/definitions/b' } } }],
  ['a reference that resolves', { type: 'object', definitions: { b: { type: 'string' } }, properties: { a: { $ref: '#/definitions/b' } } }],
  ['additionalProperties holding a bad key', { type: 'object', additionalProperties: { type: 'string', x: 1 } }],
  ['dependencies of both kinds', { type: 'object', dependencies: { a: ['b'], c: { required: ['d'] } } }],
  ['a dependency schema holding a bad key', { type: 'object', dependencies: { c: { required: ['d'], e: 1 } } }],
  ['annotations', { type: 'object', title: 't', description: 'd', default: {}, examples: [{}], deprecated: true, readOnly: true, $comment: 'c' }],
  ['tuple items', { type: 'array', items: [{ type: 'string' }, { type: 'integer', z: 2 }] }],
];

describe('strict schema checks without compiling', () => {
  it.each(CRAFTED)('%s: as ajv compiles it', (_name, schema) => {
    expect(strictlyValid(schema)).toBe(compiles(schema));
  });

  it("answers as ajv's compile on every record, params and credentials schema of every connector", () => {
    let n = 0;
    for (const lm of connectorRegistry().values()) {
      const schemas: object[] = [...lm.auth.map((v) => credentialsSchema(v.def))];
      for (const entity of lm.entities.values()) {
        schemas.push(entity.def.record);
        for (const action of entity.actions.values()) schemas.push(paramsSchema(action.def));
      }
      for (const schema of schemas) {
        expect(strictlyValid(schema), `${lm.manifest.type}: ${JSON.stringify(schema).slice(0, 200)}`).toBe(compiles(schema));
        n++;
      }
    }
    expect(n).toBeGreaterThan(500);
  });
});
