/** Search params validation: every problem reported with its path and, where closed, the valid choices. */
import { describe, expect, it } from 'vitest';
import { isSwitchboardError, type ErrorDetail } from '../../src/errors/index.ts';
import { MAX_CONDITIONS, MAX_DEPTH, parseSearchParams } from '../../src/search/index.ts';
import { DEF } from './fixtures.ts';

function problems(params: unknown): ErrorDetail[] {
  try {
    parseSearchParams(DEF, params);
  } catch (e) {
    if (isSwitchboardError(e, 'invalid_search_query')) {
      expect(e.status).toBe(400);
      return e.errors;
    }
    throw e;
  }
  throw new Error('expected invalid_search_query');
}

function nest(depth: number): Record<string, unknown> {
  let f: Record<string, unknown> = { eq: { name: 'x' } };
  for (let i = 0; i < depth; i++) f = i % 2 === 0 ? { and: [f] } : { not: f };
  return f;
}

// [name, params, path, message fragment]
const INVALID: [string, unknown, string, string][] = [
  ['params not an object', 'query', '', 'must be an object'],
  ['query missing', {}, '/query', 'query is required'],
  ['unknown param', { query: {}, page: 2 }, '/page', 'valid params: query, limit, cursor, fields'],
  ['query not an object', { query: [] }, '/query', 'must be an object'],
  ['unknown query key', { query: { where: {} } }, '/query/where', 'valid keys: filter, sort'],
  ['filter not an object', { query: { filter: 'name = 1' } }, '/query/filter', 'must be an object'],
  [
    'empty condition',
    { query: { filter: {} } },
    '/query/filter',
    'valid operators: eq, neq, gt, gte, lt, lte, in, like, fuzzy, keyword, contains, any, not, and, or',
  ],
  ['unknown operator', { query: { filter: { equals: { name: 'x' } } } }, '/query/filter/equals', 'unknown operator "equals"; valid operators: eq, neq'],
  ['operator value not an object', { query: { filter: { eq: 'x' } } }, '/query/filter/eq', 'takes an object mapping a search field'],
  [
    'unknown field',
    { query: { filter: { eq: { nmae: 'x' } } } },
    '/query/filter/eq/nmae',
    'unknown field "nmae"; valid fields: id, name, email, title, age, score, active, created_at, tags, custom, owner, attendees',
  ],
  [
    'path into a scalar field',
    { query: { filter: { eq: { 'name.first': 'x' } } } },
    '/query/filter/eq/name.first',
    '"name" is a string field; only object and array fields take a path',
  ],
  ['empty path segment', { query: { filter: { eq: { 'custom..plan': 'x' } } } }, '/query/filter/eq/custom..plan', 'segments must be non-empty'],
  [
    'string for an integer',
    { query: { filter: { eq: { age: '34' } } } },
    '/query/filter/eq/age',
    '"age" is an integer field: expected an integer, got a string (or null)',
  ],
  ['fraction for an integer', { query: { filter: { gt: { age: 1.5 } } } }, '/query/filter/gt/age', 'expected an integer, got a number'],
  ['number for a string', { query: { filter: { eq: { name: 5 } } } }, '/query/filter/eq/name', '"name" is a string field: expected a string'],
  ['null for an ordering', { query: { filter: { gt: { age: null } } } }, '/query/filter/gt/age', 'expected an integer, got null'],
  [
    'ordering on a boolean',
    { query: { filter: { gt: { active: true } } } },
    '/query/filter/gt/active',
    'gt does not apply to boolean field "active"; valid operators for boolean fields: eq, neq',
  ],
  [
    'like on an integer',
    { query: { filter: { like: { age: '3%' } } } },
    '/query/filter/like/age',
    'valid operators for integer fields: eq, neq, gt, gte, lt, lte, in',
  ],
  ['keyword on a number', { query: { filter: { keyword: { score: 'x' } } } }, '/query/filter/keyword/score', 'keyword does not apply to number field'],
  [
    'boolean ordering in an object',
    { query: { filter: { gt: { 'custom.flag': true } } } },
    '/query/filter/gt/custom.flag',
    'gt compares its values with a string or a number',
  ],
  [
    'object value in an object field',
    { query: { filter: { eq: { custom: { plan: 'pro' } } } } },
    '/query/filter/eq/custom',
    'a string, a number or a boolean, got an object',
  ],
  [
    'ordering on an array field',
    { query: { filter: { gt: { attendees: 5 } } } },
    '/query/filter/gt/attendees',
    'gt does not apply to array field "attendees"; valid operators for array fields: eq, neq, in, like, keyword, fuzzy, contains, any',
  ],
  [
    'ordering on an object field',
    { query: { filter: { lte: { custom: 3 } } } },
    '/query/filter/lte/custom',
    'lte does not apply to object field "custom"; valid operators for object fields: eq, neq, in, like, keyword, fuzzy',
  ],
  ['like on a boolean', { query: { filter: { like: { active: 't%' } } } }, '/query/filter/like/active', 'like does not apply to boolean field "active"'],
  ['fuzzy on an integer', { query: { filter: { fuzzy: { age: 'forty' } } } }, '/query/filter/fuzzy/age', 'fuzzy does not apply to integer field "age"'],
  [
    'contains on a string',
    { query: { filter: { contains: { name: 'x' } } } },
    '/query/filter/contains/name',
    'contains does not apply to string field "name"; valid operators for string fields: eq, neq, gt, gte, lt, lte, in, like, keyword, fuzzy',
  ],
  [
    'contains on an object field',
    { query: { filter: { contains: { custom: 'x' } } } },
    '/query/filter/contains/custom',
    'contains does not apply to object field "custom"',
  ],
  [
    'contains null',
    { query: { filter: { contains: { tags: null } } } },
    '/query/filter/contains/tags',
    'contains compares its values with a string, a number or a boolean, got null',
  ],
  ['any on a string', { query: { filter: { any: { name: { eq: { x: 1 } } } } } }, '/query/filter/any/name', 'any does not apply to string field "name"'],
  ['any not an object', { query: { filter: { any: [] } } }, '/query/filter/any', 'any takes an object mapping an array field to a condition'],
  ['any with a non-condition', { query: { filter: { any: { attendees: 5 } } } }, '/query/filter/any/attendees', 'a condition must be an object'],
  [
    'any with a bad element path',
    { query: { filter: { any: { attendees: { eq: { 'a..b': 1 } } } } } },
    '/query/filter/any/attendees/eq/a..b',
    'invalid element path',
  ],
  [
    'any with an object value',
    { query: { filter: { any: { attendees: { eq: { email: { a: 1 } } } } } } },
    '/query/filter/any/attendees/eq/email',
    '"email" is a path in an element: eq compares its values with a string, a number or a boolean, got an object',
  ],
  ['empty in list', { query: { filter: { in: { age: [] } } } }, '/query/filter/in/age', 'non-empty list of at most 1000 values, got 0 values'],
  ['in not a list', { query: { filter: { in: { age: 3 } } } }, '/query/filter/in/age', 'non-empty list'],
  [
    'in with too many values',
    { query: { filter: { in: { age: Array.from({ length: 1001 }, (_, i) => i) } } } },
    '/query/filter/in/age',
    'at most 1000 values, got 1001 values',
  ],
  ['in with a wrong element', { query: { filter: { in: { age: [1, 'two'] } } } }, '/query/filter/in/age/1', 'expected an integer, got a string'],
  ['like with an empty pattern', { query: { filter: { like: { name: '' } } } }, '/query/filter/like/name', 'non-empty pattern string'],
  ['keyword without words', { query: { filter: { keyword: { name: '!!! ---' } } } }, '/query/filter/keyword/name', 'a string of 1 to 32 words'],
  ['fuzzy not a string', { query: { filter: { fuzzy: { name: 3 } } } }, '/query/filter/fuzzy/name', 'a string of 1 to 32 words'],
  [
    'keyword with too many words',
    { query: { filter: { keyword: { name: Array.from({ length: 33 }, (_, i) => `w${i}`).join(' ') } } } },
    '/query/filter/keyword/name',
    '1 to 32 words',
  ],
  ['and not a list', { query: { filter: { and: { eq: { name: 'x' } } } } }, '/query/filter/and', 'and takes a non-empty list of conditions'],
  ['empty or', { query: { filter: { or: [] } } }, '/query/filter/or', 'or takes a non-empty list'],
  ['bad item in a list', { query: { filter: { and: [{ eq: { name: 'x' } }, 7] } } }, '/query/filter/and/1', 'a condition must be an object'],
  ['nested too deep', { query: { filter: nest(MAX_DEPTH + 1) } }, '', `nest deeper than the maximum of ${MAX_DEPTH}`],
  [
    'too many conditions',
    { query: { filter: { or: Array.from({ length: MAX_CONDITIONS + 1 }, (_, i) => ({ eq: { age: i } })) } } },
    '/query/filter',
    `too many conditions: ${MAX_CONDITIONS + 1}; the maximum is ${MAX_CONDITIONS}`,
  ],
  ['sort not a list', { query: { sort: { age: 'asc' } } }, '/query/sort', 'sort must be a list'],
  ['sort key with two fields', { query: { sort: [{ age: 'asc', name: 'asc' }] } }, '/query/sort/0', 'a sort key is an object with one field'],
  [
    'sort on an unknown field',
    { query: { sort: [{ nope: 'asc' }] } },
    '/query/sort/0/nope',
    'unknown field "nope"; sortable fields: id, name, email, title, age, score, active, created_at',
  ],
  ['sort on an object field', { query: { sort: [{ custom: 'asc' }] } }, '/query/sort/0/custom', 'object fields cannot be sorted'],
  ['sort direction', { query: { sort: [{ age: 'up' }] } }, '/query/sort/0/age', 'sort direction must be "asc" or "desc", got "up"'],
  ['sort twice on a field', { query: { sort: [{ age: 'asc' }, { age: 'desc' }] } }, '/query/sort/1/age', 'appears twice'],
  [
    'too many sort keys',
    { query: { sort: [{ id: 'asc' }, { name: 'asc' }, { email: 'asc' }, { title: 'asc' }, { age: 'asc' }] } },
    '/query/sort',
    'at most 4 sort keys',
  ],
  ['limit zero', { query: {}, limit: 0 }, '/limit', 'limit must be an integer from 1 to 1000, got 0'],
  ['limit too large', { query: {}, limit: 1001 }, '/limit', 'from 1 to 1000'],
  ['limit as a string', { query: {}, limit: '10' }, '/limit', 'got "10"'],
  ['cursor not a string', { query: {}, cursor: 12 }, '/cursor', 'cursor must be the non-empty string'],
  ['fields not a list', { query: {}, fields: 'name' }, '/fields', 'fields must be a non-empty list'],
  ['fields empty', { query: {}, fields: [] }, '/fields', 'non-empty list'],
  ['fields unknown root', { query: {}, fields: ['name', 'nope.x'] }, '/fields/1', 'unknown field "nope.x"'],
  ['fields path into a scalar', { query: {}, fields: ['age.x'] }, '/fields/0', 'only object and array fields take a path'],
  ['JSON pointer escaping in paths', { query: { filter: { eq: { 'a/b~c': 1 } } } }, '/query/filter/eq/a~1b~0c', 'unknown field'],
];

describe('search params validation', () => {
  it.each(INVALID)('%s', (_name, params, path, fragment) => {
    const errors = problems(params);
    const match = errors.find((e) => e.path === path || (path === '' && e.message.includes(fragment)));
    expect(match, JSON.stringify(errors)).toBeDefined();
    expect(match!.message).toContain(fragment);
  });

  it('reports every problem at once', () => {
    const errors = problems({ query: { filter: { and: [{ eq: { age: 'x' } }, { like: { nope: '%' } }], zap: {} }, sort: [{ custom: 'asc' }] }, limit: -1 });
    expect(errors.map((e) => e.path)).toEqual([
      '/query/filter/and/0/eq/age',
      '/query/filter/and/1/like/nope',
      '/query/filter/zap',
      '/query/sort/0/custom',
      '/limit',
    ]);
  });

  it('accepts the grammar and applies defaults', () => {
    const q = parseSearchParams(DEF, {
      query: {
        filter: {
          and: [
            { eq: { name: 'x', age: 3 } },
            { or: [{ not: { in: { tags: ['a', 1, true] } } }, { eq: { active: null } }] },
            { like: { 'custom.plan': 'p%' } },
          ],
        },
        sort: [{ age: 'desc' }, { name: 'asc' }],
      },
      cursor: null,
    });
    expect(q.limit).toBe(1000);
    expect(q.cursor).toBeUndefined();
    expect(q.sort.map((s) => [s.field.name, s.dir, s.kind])).toEqual([
      ['age', 'desc', 'n'],
      ['name', 'asc', 's'],
    ]);
    expect(q.filter).toMatchObject({
      op: 'and',
      items: [
        {
          op: 'and',
          items: [
            { op: 'eq', kind: 's', value: 'x' },
            { op: 'eq', kind: 'n', value: 3 },
          ],
        },
        {
          op: 'or',
          items: [
            { op: 'not', item: { op: 'in', values: [{ kind: 's' }, { kind: 'n' }, { kind: 'b' }] } },
            { op: 'present', present: false },
          ],
        },
        { op: 'like', field: { root: 'custom', name: 'custom.plan', multi: true } },
      ],
    });
  });

  it('parses contains and any; paths inside object fields and elements keep ordering', () => {
    const q = parseSearchParams(DEF, {
      query: {
        filter: { and: [{ contains: { tags: 'vip' } }, { any: { attendees: { gt: { seats: 2 }, eq: { role: 'host' } } } }, { gt: { 'custom.seats': 1 } }] },
      },
    });
    expect(q.filter).toMatchObject({
      op: 'and',
      items: [
        { op: 'contains', field: { name: 'tags', root: 'tags', type: 'array' }, kind: 's', value: 'vip' },
        {
          op: 'any',
          field: { name: 'attendees' },
          item: {
            op: 'and',
            items: [
              { op: 'gt', field: { name: 'seats', inner: true }, value: 2 },
              { op: 'eq', field: { name: 'role', inner: true }, value: 'host' },
            ],
          },
        },
        { op: 'gt', field: { name: 'custom.seats', multi: true }, value: 1 },
      ],
    });
  });

  it('allows exactly the documented nesting depth', () => {
    expect(() => parseSearchParams(DEF, { query: { filter: nest(MAX_DEPTH) } })).not.toThrow();
  });

  it('deduplicates keyword words and cuts long string values to the compared length', () => {
    const q = parseSearchParams(DEF, { query: { filter: { and: [{ keyword: { name: 'Smith smith SMITH jones' } }, { eq: { name: 'x'.repeat(600) } }] } } });
    expect(q.filter).toMatchObject({ items: [{ words: ['smith', 'jones'] }, { value: 'x'.repeat(512) }] });
  });
});
