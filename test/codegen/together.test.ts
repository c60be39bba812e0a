/**
 * Many schemas through one json-schema-to-typescript compile (src/codegen/together.ts): each
 * schema's text is the text a compile of it alone gives, and schemas that one compile would
 * declare differently (a $ref, definitions, a nested titled schema, a repeated name) are compiled
 * one by one.
 */
import type { JSONSchema } from 'json-schema-to-typescript';
import { describe, expect, it } from 'vitest';
import { compileHere, type SchemaBatch } from '../../src/codegen/schema-pool.ts';
import { compileTogether, splitDeclarations } from '../../src/codegen/together.ts';

const options = { bannerComment: '', format: false, additionalProperties: false, strictIndexSignatures: true, unreachableDefinitions: true };

/** compileHere, counting the compiles it runs. */
function counting(): { run: (b: SchemaBatch) => Promise<string[]>; compiles: () => number } {
  let n = 0;
  return {
    run: (b) => {
      n += b.inputs.length;
      return compileHere(b);
    },
    compiles: () => n,
  };
}

const titled = (schemas: Record<string, JSONSchema>): SchemaBatch => ({
  inputs: Object.entries(schemas).map(([title, s]) => ({ ...s, title })),
  names: Object.keys(schemas),
  options,
});

const plain: Record<string, JSONSchema> = {
  ThingRecord: {
    type: 'object',
    description: 'A thing.\nOn two lines, with a */ in it.',
    properties: {
      id: { type: 'string', description: 'Its id' },
      kind: { enum: ['a', 'b', null] },
      tags: { type: ['array', 'null'], items: { type: 'string' } },
      nested: { type: 'object', properties: { n: { type: 'integer', description: 'A count' } }, required: ['n'] },
      export: { type: 'boolean' },
    },
    required: ['id'],
  },
  ThingListParams: { type: 'object', properties: { cursor: { type: 'string' }, page_size: { type: 'integer', minimum: 1 } } },
  ThingNames: { type: 'array', items: { type: 'string' }, description: 'Names' },
  ThingScalar: { type: ['string', 'null'] },
};

describe('compileTogether', () => {
  it('gives each schema the text of its own compile, in one compile', async () => {
    const batch = titled(plain);
    const c = counting();
    const together = await compileTogether(batch, c.run);
    expect(c.compiles()).toBe(1);
    expect(together).toEqual(await compileHere(batch));
  });

  it.each<[string, Record<string, JSONSchema>]>([
    ['a $ref', { A: { type: 'object', properties: { b: { $ref: '#/definitions/B' } }, definitions: { B: { type: 'string' } } }, C: { type: 'string' } }],
    [
      'a nested titled schema',
      { A: { type: 'object', properties: { b: { type: 'object', title: 'Shared', properties: {} } } }, C: { type: 'object', properties: {} } },
    ],
    ['a named enum', { A: { type: 'object', properties: { e: { type: 'string', enum: ['x', 'y'], tsEnumNames: ['X', 'Y'] } } }, C: { type: 'string' } }],
  ])('compiles schemas with %s one by one, with the same text', async (_what, schemas) => {
    const batch = titled(schemas);
    const c = counting();
    const together = await compileTogether(batch, c.run);
    expect(together).toEqual(await compileHere(batch));
    expect(c.compiles()).toBeGreaterThanOrEqual(batch.inputs.length);
  });

  it('compiles one by one when a name repeats or a title is not the name', async () => {
    for (const batch of [
      { inputs: [{ type: 'string', title: 'A' } as JSONSchema, { type: 'number', title: 'A' } as JSONSchema], names: ['A', 'A'], options },
      { inputs: [{ type: 'string', title: 'A' } as JSONSchema, { type: 'number', title: 'Other' } as JSONSchema], names: ['A', 'B'], options },
    ]) {
      const c = counting();
      expect(await compileTogether(batch, c.run)).toEqual(await compileHere(batch));
      expect(c.compiles()).toBe(2);
    }
  });
});

describe('splitDeclarations', () => {
  const text = [
    'export interface Root {',
    'A?: A',
    '}',
    '/**',
    ' * About A',
    ' */',
    'export interface A {',
    '/**',
    ' * x',
    ' */',
    'x: string',
    '}',
    'export type B = string',
    '',
  ].join('\n');
  it('cuts at each declaration, with its doc comment', () => {
    expect(splitDeclarations(text, ['A', 'B'], 'Root')).toEqual([
      ['/**', ' * About A', ' */', 'export interface A {', '/**', ' * x', ' */', 'x: string', '}', ''].join('\n'),
      'export type B = string\n',
    ]);
  });
  it('gives up on a declaration it was not asked for, one missing, or an export it does not know', () => {
    expect(splitDeclarations(text, ['A'], 'Root')).toBeUndefined();
    expect(splitDeclarations(text, ['A', 'B', 'C'], 'Root')).toBeUndefined();
    expect(splitDeclarations(text.replace('export type B', 'export function B'), ['A', 'B'], 'Root')).toBeUndefined();
  });
});
