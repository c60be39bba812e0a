/** The key ring: AES-256-GCM round trips, rotation by key id, row binding, tampering, parsing. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateKeySpec, keyFingerprint, KeyRing, parseKeyRing } from '../../src/store/index.ts';

const b64 = () => randomBytes(32).toString('base64');

describe('key ring', () => {
  it('seals with the first key and opens with any key of the ring (rotation)', () => {
    const oldSpec = `old:${b64()}`;
    const old = parseKeyRing(oldSpec);
    const sealed = old.sealJson({ api_key: 'secret' }, 'connector:1');
    expect(sealed.keyId).toBe('old');
    expect(sealed.ciphertext).not.toContain('secret');
    const rotated = parseKeyRing(`new:${b64()},${oldSpec}`);
    expect(rotated.openJson(sealed, 'connector:1')).toEqual({ api_key: 'secret' });
    expect(rotated.sealJson({ a: 1 }, 'x').keyId).toBe('new');
  });

  it('uses a fresh nonce every time', () => {
    const ring = parseKeyRing(generateKeySpec());
    expect(ring.seal('same', 'c').ciphertext).not.toBe(ring.seal('same', 'c').ciphertext);
  });

  it('refuses a ciphertext bound to another row, a tampered one, and an unknown key id', () => {
    const ring = parseKeyRing(generateKeySpec());
    const sealed = ring.seal('value', 'connector:a');
    expect(() => ring.open(sealed, 'connector:b')).toThrow(expect.objectContaining({ code: 'encryption_key_mismatch' }));
    const raw = Buffer.from(sealed.ciphertext, 'base64');
    raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
    expect(() => ring.open({ ...sealed, ciphertext: raw.toString('base64') }, 'connector:a')).toThrow(/does not decrypt/);
    expect(() => ring.open({ ...sealed, keyId: 'gone' }, 'connector:a')).toThrow(expect.objectContaining({ code: 'encryption_key_missing' }));
  });

  it('parses a bare key (its id is its fingerprint) and refuses malformed rings', () => {
    const key = randomBytes(32);
    const ring = parseKeyRing(key.toString('base64'));
    expect(ring.primaryId).toBe(keyFingerprint(key));
    expect(() => parseKeyRing('')).toThrow(/empty/);
    expect(() => parseKeyRing(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => parseKeyRing(`a:${b64()},a:${b64()}`)).toThrow(/twice/);
    expect(() => new KeyRing([])).toThrow(/at least one key/);
  });
});
