/** New ids take the shape of an example id: here prefixed ids (Twilio's SM..., SendGrid's dynamic template d-..., Okta's 00u...). */
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/simulator/openapi/ids.ts';

const rand = (): (() => number) => {
  let x = 7;
  return () => ((x = (x * 16807) % 2147483647) - 1) / 2147483646;
};

describe('newId', () => {
  it('keeps a lower-case word and a colon before a base64url key (id:…, dbid:…), with a new key of the same length', () => {
    const r = rand();
    const id = String(newId(r, 'id:a4ayc_80_OEAAAAAAAAAXw'));
    expect(id).toMatch(/^id:[A-Za-z0-9_-]{22}$/);
    expect(id).not.toBe('id:a4ayc_80_OEAAAAAAAAAXw');
    expect(String(newId(r, 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc'))).toMatch(/^dbid:[A-Za-z0-9_-]{35}$/);
  });

  it('keeps a two-capital or letter-and-dash prefix before 32 hex digits, with new digits', () => {
    const r = rand();
    const twilio = newId(r, 'SM0123456789abcdef0123456789abcdef');
    expect(twilio).toMatch(/^SM[0-9a-f]{32}$/);
    const template = newId(r, 'd-f43daeeaef504760851f727007e0b5d0');
    expect(template).toMatch(/^d-[0-9a-f]{32}$/);
    expect(template).not.toBe('d-f43daeeaef504760851f727007e0b5d0');
    expect(newId(r, 'dx-f43daeeaef504760851f727007e0b5d0')).toMatch(/^\d{16}$/);
  });

  it('keeps the length of a 64-bit number kept as text (17 to 19 digits), else makes 16 digits', () => {
    const r = rand();
    expect(newId(r, '5843104000000425001')).toMatch(/^[1-9]\d{18}$/);
    expect(newId(r, '58431040000004250')).toMatch(/^[1-9]\d{16}$/);
    expect(newId(r, '123456789012')).toMatch(/^\d{16}$/);
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

  it('keeps a three-letter lower-case type before 14 letters and digits (record, base and table ids: rec..., app..., tbl...)', () => {
    const r = rand();
    for (const like of ['rec560UJdUtocSouk', 'appLkNDICXNqxSDhG', 'tbltp8DGLhqbUmjK1']) {
      const id = String(newId(r, like));
      expect(id).toMatch(new RegExp(`^${like.slice(0, 3)}[A-Za-z0-9]{14}$`));
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

  it("keeps a drive item id's first 8 characters (its drive's) and length, with a new base32 tail", () => {
    const r = rand();
    const like = '01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K';
    const id = String(newId(r, like));
    expect(id).toMatch(/^01BYE5RZ[A-Z2-7]{26}$/);
    expect(id).not.toBe(like);
    // Digits only stay digits; a short capitals-and-digits id keeps its first letter (Slack's C012AB3CD).
    expect(newId(r, '01234567890123456789')).toMatch(/^\d{16}$/);
    expect(newId(r, 'C012AB3CD')).toMatch(/^C[A-Z0-9]{8}$/);
  });

  it("keeps an id of capital letters only to its length and alphabet (Calendly's uuids)", () => {
    const id = String(newId(rand(), 'AAAAAAAAAAAAAAAA'));
    expect(id).toMatch(/^[A-Z]{16}$/);
    expect(id).not.toBe('AAAAAAAAAAAAAAAA');
  });

  it("keeps a thread id's numeric prefix, hex length and domain suffix (19:<hex>@thread.tacv2)", () => {
    const r = rand();
    const like = '19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2';
    const a = String(newId(r, like));
    const b = String(newId(r, like));
    expect(a).toMatch(/^19:[0-9a-f]{32}@thread\.tacv2$/);
    expect(new Set([a, b, like]).size).toBe(3);
    expect(newId(r, '19:2da4c29f6d7041eca70b638b43d45437@thread.v2')).toMatch(/^19:[0-9a-f]{32}@thread\.v2$/);
  });

  it('makes epoch milliseconds as text: in the past when seeded, now and increasing when created', () => {
    const r = rand();
    const seeded = Number(newId(r, '1616990032035'));
    expect(seeded).toBeGreaterThanOrEqual(1_600_000_000_000);
    expect(seeded).toBeLessThan(1_680_000_000_000);
    const before = Date.now();
    const first = Number(newId(r, '1616990032035', true));
    const second = Number(newId(r, '1616990032035', true));
    expect(first).toBeGreaterThanOrEqual(before);
    expect(second).toBeGreaterThan(first);
    expect(String(second)).toMatch(/^\d{13}$/);
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
