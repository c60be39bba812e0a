/** Cursors: opaque, signed, bound to their query. */
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/errors/index.ts';
import { decodeCursor, encodeCursor } from '../../src/search/cursor.ts';
import type { SortKey } from '../../src/search/query.ts';

const secret = Buffer.from('secret');
const sort: SortKey[] = [
  { field: { name: 'name', root: 'name', type: 'string', multi: false }, kind: 's', dir: 'asc' },
  { field: { name: 'age', root: 'age', type: 'integer', multi: false }, kind: 'n', dir: 'desc' },
];

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return isSwitchboardError(e) ? e.code : 'other';
  }
  return undefined;
}

describe('cursors', () => {
  const cursor = encodeCursor(secret, 'query-a', { values: ['Smith', null], rid: 42 });

  it('round-trips a position', () => {
    expect(decodeCursor(secret, 'query-a', sort, cursor)).toEqual({ values: ['Smith', null], rid: 42 });
  });

  it('rejects another query, another secret, or any change', () => {
    expect(code(() => decodeCursor(secret, 'query-b', sort, cursor))).toBe('invalid_cursor');
    expect(code(() => decodeCursor(Buffer.from('other'), 'query-a', sort, cursor))).toBe('invalid_cursor');
    for (let i = 0; i < cursor.length; i++) {
      const c = cursor[i] === 'A' ? 'B' : 'A';
      const changed = cursor.slice(0, i) + c + cursor.slice(i + 1);
      if (changed === cursor) continue;
      expect(
        code(() => decodeCursor(secret, 'query-a', sort, changed)),
        `position ${i}`,
      ).toBe('invalid_cursor');
    }
  });

  it('rejects a signed cursor whose values do not fit the sort', () => {
    expect(code(() => decodeCursor(secret, 'query-a', sort.slice(0, 1), cursor))).toBe('invalid_cursor');
    const wrongType = encodeCursor(secret, 'query-a', { values: [3, 4], rid: 1 });
    expect(code(() => decodeCursor(secret, 'query-a', sort, wrongType))).toBe('invalid_cursor');
  });

  it('rejects garbage', () => {
    for (const bad of ['', '.', 'abc', 'abc.def', `${cursor}.x`])
      expect(
        code(() => decodeCursor(secret, 'query-a', sort, bad)),
        bad,
      ).toBe('invalid_cursor');
  });
});
