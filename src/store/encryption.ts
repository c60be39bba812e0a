/**
 * Encryption at rest for credentials and OAuth tokens: AES-256-GCM with a key ring.
 *
 * Every ciphertext is stored with the id of the key that sealed it, so keys can rotate: put the
 * new key first in SWITCHBOARD_ENCRYPTION_KEY (it encrypts), keep the old ones after it (they
 * still decrypt) until every row has been rewritten. Each ciphertext is also bound to the row it
 * belongs to through GCM's additional authenticated data, so a ciphertext copied into another
 * row (another connector, another organization) fails to decrypt instead of being used there.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SwitchboardError } from '../errors/index.ts';

/** The environment variable holding the key ring. */
export const ENCRYPTION_KEY_ENV = 'SWITCHBOARD_ENCRYPTION_KEY';

const IV_BYTES = 12; // the GCM nonce size NIST SP 800-38D recommends
const TAG_BYTES = 16;

/** A sealed value: the key id and base64(iv ‖ tag ‖ ciphertext). */
export interface Sealed {
  keyId: string;
  ciphertext: string;
}

/** AES-256-GCM keys by id; the first one encrypts, every one decrypts. */
export class KeyRing {
  private readonly keys: Map<string, Buffer>;
  readonly primaryId: string;

  constructor(keys: { id: string; key: Buffer }[]) {
    const first = keys[0];
    if (first === undefined) throw new Error('a key ring needs at least one key');
    this.keys = new Map();
    for (const k of keys) {
      if (k.key.length !== 32) throw new Error(`encryption key "${k.id}" must be 32 bytes (base64 of 32 random bytes), got ${k.key.length}`);
      if (this.keys.has(k.id)) throw new Error(`encryption key id "${k.id}" appears twice`);
      this.keys.set(k.id, k.key);
    }
    this.primaryId = first.id;
  }

  /** Key ids, primary first. */
  get ids(): string[] {
    return [...this.keys.keys()];
  }

  /** Encrypt `plaintext` with the primary key, bound to `context` (e.g. "connector:<id>"). */
  seal(plaintext: string, context: string): Sealed {
    const key = this.keys.get(this.primaryId) as Buffer;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: this.primaryId, ciphertext: Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64') };
  }

  /** Decrypt a sealed value; throws encryption_key_missing for an unknown key id, encryption_key_mismatch when the key under that id does not authenticate it. */
  open(sealed: Sealed, context: string): string {
    const key = this.keys.get(sealed.keyId);
    if (key === undefined) {
      throw new SwitchboardError(
        'encryption_key_missing',
        `Stored credentials were encrypted with key "${sealed.keyId}", which is not in ${ENCRYPTION_KEY_ENV} (configured: ${this.ids.join(', ')})`,
      );
    }
    const raw = Buffer.from(sealed.ciphertext, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SwitchboardError('internal_error', 'Stored ciphertext is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch (e) {
      // Almost always a different key configured under the same id; a row altered in the database looks the same.
      throw new SwitchboardError(
        'encryption_key_mismatch',
        `The key configured as "${sealed.keyId}" does not decrypt these credentials: ${ENCRYPTION_KEY_ENV} holds another key under that id (or the stored row was altered)`,
        {
          cause: e,
          details: { key_id: sealed.keyId },
        },
      );
    }
  }

  /** A 32-byte secret for another purpose (e.g. signing search cursors), derived from the primary key. */
  derive(label: string): Buffer {
    return createHmac('sha256', this.keys.get(this.primaryId) as Buffer)
      .update(`switchboard:${label}`)
      .digest();
  }

  /** Seal a JSON value. */
  sealJson(value: unknown, context: string): Sealed {
    return this.seal(JSON.stringify(value), context);
  }

  /** Open a sealed JSON value. */
  openJson<T = unknown>(sealed: Sealed, context: string): T {
    return JSON.parse(this.open(sealed, context)) as T;
  }
}

/** A stable key id derived from the key itself, so instances sharing a key agree on its id. */
export function keyFingerprint(key: Buffer): string {
  return `k${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

function decodeKey(b64: string, where: string): Buffer {
  const key = Buffer.from(b64.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${where}: expected base64 of 32 bytes, got ${key.length} bytes`);
  return key;
}

/**
 * Parse a key ring: `<base64 key>` or `<id>:<base64 key>,<id>:<base64 key>,...` (first encrypts).
 * A key given without an id gets its fingerprint as id.
 */
export function parseKeyRing(value: string, where: string = ENCRYPTION_KEY_ENV): KeyRing {
  const parts = value
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) throw new Error(`${where} is empty`);
  return new KeyRing(
    parts.map((p, i) => {
      const m = /^([A-Za-z0-9_.-]{1,64}):(.+)$/.exec(p);
      if (m) return { id: m[1] as string, key: decodeKey(m[2] as string, `${where} key ${i + 1} (${m[1]})`) };
      const key = decodeKey(p, `${where} key ${i + 1}`);
      return { id: keyFingerprint(key), key };
    }),
  );
}

/** What an operator needs to hear when stored credentials name keys the ring lacks. */
export function missingKeyMessage(missing: readonly string[], why: string): string {
  return `The database holds credentials encrypted with key id(s) ${missing.join(', ')}, but ${why}. Restore the key file, or set ${ENCRYPTION_KEY_ENV}="${missing[0] ?? 'id'}:<base64 key>[,<other id>:<base64 key>]" with every listed id; Switchboard will not start (nor generate a new key) without them.`;
}

/** A fresh random key ring entry, as `<id>:<base64 key>`. */
export function generateKeySpec(): string {
  const key = randomBytes(32);
  return `${keyFingerprint(key)}:${key.toString('base64')}`;
}

export interface ResolvedKeyRing {
  ring: KeyRing;
  /** Where the ring came from: the environment, a key file (path), or memory (ephemeral). */
  source: 'env' | 'file' | 'generated-file' | 'ephemeral';
  file?: string;
}

/**
 * The key ring of a deployment: from `envValue` when set; otherwise, for a SQLite file, from
 * `switchboard.key` beside it (generated with mode 0600 on first start); for in-memory SQLite an
 * ephemeral key. PostgreSQL without a key is refused: several instances must share one key, so
 * a generated per-machine key would make each instance unable to read the others' rows.
 */
export function resolveKeyRing(
  envValue: string | undefined,
  database: { dialect: 'sqlite' | 'postgres'; file?: string },
  storedKeyIds: readonly string[] = [],
): ResolvedKeyRing {
  if (envValue !== undefined && envValue.trim() !== '') return { ring: parseKeyRing(envValue), source: 'env' };
  if (database.dialect === 'postgres') {
    throw new Error(
      `${ENCRYPTION_KEY_ENV} is required with PostgreSQL (every instance must use the same key). Generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('base64'))"`,
    );
  }
  if (database.file === undefined || database.file === ':memory:') return { ring: parseKeyRing(generateKeySpec()), source: 'ephemeral' };
  const file = join(dirname(database.file), 'switchboard.key');
  if (existsSync(file)) return { ring: parseKeyRing(readFileSync(file, 'utf8'), file), source: 'file', file };
  // Never a new key beside rows sealed with another: they would stay unreadable, and new rows would use the wrong key.
  if (storedKeyIds.length > 0) throw new Error(missingKeyMessage(storedKeyIds, `the key file ${file} is missing`));
  // 'wx': never overwrite a key another process wrote meanwhile (that would orphan its rows).
  writeFileSync(file, `${generateKeySpec()}\n`, { mode: 0o600, flag: 'wx' });
  return { ring: parseKeyRing(readFileSync(file, 'utf8'), file), source: 'generated-file', file };
}
