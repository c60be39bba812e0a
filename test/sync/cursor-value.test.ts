/** The change time a sync's incremental mark reads: a record's own field, else a dotted path into it (a nested MetaData.LastUpdatedTime). */
import { describe, expect, it } from 'vitest';
import { cursorValue } from '../../src/sync/pages.ts';

describe('cursorValue', () => {
  it('reads the field of that name first, else the dotted path; undefined when the path breaks', () => {
    const record = { updated_at: 5, 'a.b': 'own', a: { b: 'nested' }, MetaData: { LastUpdatedTime: '2026-01-02T03:04:05-08:00' } };
    expect(cursorValue(record, 'updated_at')).toBe(5);
    expect(cursorValue(record, 'a.b')).toBe('own');
    expect(cursorValue(record, 'MetaData.LastUpdatedTime')).toBe('2026-01-02T03:04:05-08:00');
    expect(cursorValue(record, 'MetaData.Missing.Deeper')).toBeUndefined();
    expect(cursorValue({ MetaData: null }, 'MetaData.LastUpdatedTime')).toBeUndefined();
  });
});
