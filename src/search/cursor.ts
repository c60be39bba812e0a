/**
 * Opaque keyset cursors: the last returned record's sort values and rid, bound to the query that
 * produced them and signed with HMAC-SHA256, so a cursor cannot be forged, altered, or replayed
 * against another query, entity or connector.
 *
 * Format: base64url(JSON payload) "." base64url(first 16 bytes of HMAC-SHA256(secret, payload)).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { SwitchboardError } from '../errors/index.ts';
import type { SortKey } from './query.ts';

/** A keyset position: sort values (null where the record has no value) and the record's rid. */
export interface CursorPosition {
  values: (string | number | null)[];
  rid: number;
}

interface Payload {
  /** Hash of the query the cursor belongs to. */
  q: string;
  k: (string | number | null)[];
  r: number;
}

/** Identify a query for cursor binding: connector, entity, filter and sort (not limit or fields). */
export function queryFingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}

function sign(secret: Buffer, payload: string): string {
  return createHmac('sha256', secret).update(payload).digest().subarray(0, 16).toString('base64url');
}

export function encodeCursor(secret: Buffer, fingerprint: string, position: CursorPosition): string {
  const payload = Buffer.from(JSON.stringify({ q: fingerprint, k: position.values, r: position.rid } satisfies Payload)).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

function bad(message: string): SwitchboardError {
  return new SwitchboardError('invalid_cursor', message, { errors: [{ path: '/cursor', message }] });
}

/**
 * Verify and read a cursor for this query. Throws `invalid_cursor` (400) when it is malformed,
 * its signature does not verify, or it was issued for a different query.
 */
export function decodeCursor(secret: Buffer, fingerprint: string, sort: SortKey[], cursor: string): CursorPosition {
  const dot = cursor.indexOf('.');
  const payload = dot < 0 ? '' : cursor.slice(0, dot);
  const signature = Buffer.from(dot < 0 ? '' : cursor.slice(dot + 1), 'base64url');
  const expected = Buffer.from(sign(secret, payload), 'base64url');
  if (payload === '' || signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
    throw bad('cursor is malformed or has been altered; pass meta.cursor from the previous response unchanged');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    // Only reachable with a valid signature over garbage, i.e. a changed secret format.
    throw bad('cursor is malformed');
  }
  const p = parsed as Partial<Payload> | null;
  if (p === null || typeof p !== 'object' || typeof p.q !== 'string' || !Array.isArray(p.k) || typeof p.r !== 'number' || !Number.isSafeInteger(p.r)) {
    throw bad('cursor is malformed');
  }
  if (p.q !== fingerprint) throw bad('cursor belongs to a different query; a cursor is valid only with the same connector, entity, filter and sort');
  if (p.k.length !== sort.length || p.k.some((v, i) => v !== null && typeof v !== (sort[i]!.kind === 's' ? 'string' : 'number'))) {
    throw bad("cursor does not match the query's sort");
  }
  return { values: p.k, rid: p.r };
}
