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

  it('makes 18-character case-safe ids with the key prefix and the suffix spelling the capitals of the first 15', () => {
    const r = rand();
    for (const like of ['001D000000IqhSLIAZ', '00QDn000006sL1kMAE', '500Dn000002XyZaIAK']) {
      const id = String(newId(r, like));
      expect(id).toMatch(new RegExp(`^${like.slice(0, 3)}[A-Za-z0-9]{12}[A-Z0-5]{3}$`));
      expect(id).not.toBe(like);
      const bits = [0, 5, 10].map((at) => [...id.slice(at, at + 5)].reduce((b, c, i) => (/[A-Z]/.test(c) ? b | (1 << i) : b), 0));
      expect(id.slice(15)).toBe(bits.map((b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345'[b]).join(''));
    }
    // A suffix that does not spell the capitals is no such id: not kept as a prefix.
    expect(String(newId(r, '001D000000IqhSLAAA')).startsWith('001')).toBe(false);
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
});
