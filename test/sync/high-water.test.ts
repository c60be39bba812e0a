/**
 * The high-water mark of an incremental sync: the higher of two values. Numbers compare as numbers,
 * ISO times as text, and whole numbers written as text (Discord's snowflake ids, 18 or 19 digits,
 * too long for a JSON number) by their length first: "999..." (18 digits) is below "1000..." (19).
 */
import { describe, expect, it } from 'vitest';
import { maxMark } from '../../src/sync/pages.ts';

describe('maxMark', () => {
  it('keeps the later ISO time, and the other value when one is missing', () => {
    expect(maxMark('2026-01-02T00:00:00Z', '2026-01-01T23:59:59Z')).toBe('2026-01-02T00:00:00Z');
    expect(maxMark(undefined, '2026-01-01')).toBe('2026-01-01');
    expect(maxMark('2026-01-01', null)).toBe('2026-01-01');
  });

  it('compares numbers as numbers', () => {
    expect(maxMark(9, 10)).toBe(10);
  });

  it('compares ids of digits of different lengths by length, then as text', () => {
    expect(maxMark('999999999999999999', '1000000000000000000')).toBe('1000000000000000000');
    expect(maxMark('1100000000000000000', '1000000000000000000')).toBe('1100000000000000000');
    expect(maxMark('175928847299117063', '81384788765712384')).toBe('175928847299117063');
  });
});
