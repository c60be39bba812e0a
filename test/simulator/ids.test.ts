/** New ids take the shape of an example id: here prefixed ids (Twilio's SM..., SendGrid's dynamic template d-..., Okta's 00u...). */
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/simulator/openapi/ids.ts';

const rand = (): (() => number) => {
  let x = 7;
  return () => ((x = (x * 16807) % 2147483647) - 1) / 2147483646;
};

describe('newId', () => {
  it('keeps a two-capital or letter-and-dash prefix before 32 hex digits, with new digits', () => {
    const r = rand();
    const twilio = newId(r, 'SM0123456789abcdef0123456789abcdef');
    expect(twilio).toMatch(/^SM[0-9a-f]{32}$/);
    const template = newId(r, 'd-f43daeeaef504760851f727007e0b5d0');
    expect(template).toMatch(/^d-[0-9a-f]{32}$/);
    expect(template).not.toBe('d-f43daeeaef504760851f727007e0b5d0');
    expect(newId(r, 'dx-f43daeeaef504760851f727007e0b5d0')).toMatch(/^\d{16}$/);
  });

  it("keeps a digit-led three-character type prefix before a mixed-case key (Okta's users, groups, apps)", () => {
    const r = rand();
    for (const like of ['00u1f96ECLNVOKVMUSEA', '00g1emaKYZTWRYYRRTSK', '0oa1gjh63g214q0Hq0g4']) {
      const id = String(newId(r, like));
      expect(id.slice(0, 3)).toBe(like.slice(0, 3));
      expect(id).toHaveLength(20);
      expect(id).not.toBe(like);
    }
  });

  it("keeps a long opaque base64 id's prefix and padding, with a new tail (a mailbox item id)", () => {
    const r = rand();
    const like = 'AAMkAGVmMDEzMTM4LTZmYWUtNDdkNC1hMDZiLTU1OGY5OTZhYmY4OABGAAAAAAAiQ8W967B7TKBjgx9rVEURBwAiIsqMbYjsT5e-T7KzowPTAAAYbvZDAAA=';
    const a = newId(r, like) as string;
    const b = newId(r, like) as string;
    expect(a).toHaveLength(like.length);
    expect(a.slice(0, like.length - 17)).toBe(like.slice(0, like.length - 17));
    expect(a.endsWith('=')).toBe(true);
    expect(new Set([a, b, like]).size).toBe(3);
    // Without any of - _ + / = it is no opaque id (capitals only keep their alphabet and length).
    expect(newId(r, 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toMatch(/^[A-Z]{44}$/);
  });

  it("keeps an id of capital letters only to its length and alphabet (Calendly's uuids)", () => {
    const id = String(newId(rand(), 'AAAAAAAAAAAAAAAA'));
    expect(id).toMatch(/^[A-Z]{16}$/);
    expect(id).not.toBe('AAAAAAAAAAAAAAAA');
  });

  it('mints a long number as text (a snowflake) time-ordered: seeded ones in the past, created ones now and increasing', () => {
    const r = rand();
    const seeded = [newId(r, '1163421849870925824'), newId(r, '1163421849870925824')].map(String);
    const created = [newId(r, '1163421849870925824', true), newId(r, '1163421849870925824', true)].map(String);
    for (const id of [...seeded, ...created]) expect(id).toMatch(/^[1-9]\d{17,18}$/);
    expect(seeded[0]).not.toBe(seeded[1]);
    // Milliseconds since 2015 in the high bits: seeded before 2023-06, created at the clock's time, each later than the last.
    const at = (id: string): number => Number((BigInt(id) >> 22n) + 1_420_070_400_000n);
    for (const id of seeded) expect(at(id)).toBeLessThan(Date.UTC(2023, 6, 1));
    expect(at(created[0]!)).toBeGreaterThan(Date.UTC(2025, 0, 1));
    expect(BigInt(created[1]!) > BigInt(created[0]!)).toBe(true);
    expect(String(newId(r, '1204215360145423'))).toMatch(/^[1-9]\d{15}$/);
  });
});
