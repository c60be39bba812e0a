/**
 * Sort pair row signatures (schema.ts, 0004 and 0006): the record's values as text entries and
 * their bloom bits, computed in SQL where a pair is filled, where a record is written and where a
 * walk of a pair checks an equality (signatureCheck).
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { sqlValue } from './predicates.ts';
import type { ScalarValue, ValueKind } from './query.ts';

/**
 * The signature of the record `rid` (an expression) from its indexed values, null above 64 values:
 * its values' entries (signatureEntry), each followed by a \x01 and the first preceded by one
 * (`\x014:lead\x015=105\x01…`), so that a value is there when its entry, \x01 on both sides, is
 * found in it. Computed in SQL from search_values the same way when a pair is filled, when a
 * record is written and when a search looks for a value (signatureCheck).
 */
export function recordSignature(rid: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT CASE WHEN count(*) <= ${sql.lit(SIGNATURE_MAX)} THEN chr(1) || string_agg(${signatureEntry(sql`x.field_id`, sql`x.txt`, sql`x.num`)}, chr(1)) || chr(1) END FROM search_values x WHERE x.rid = ${rid})`;
}

/**
 * The bloom bits of a signature (an expression; schema.ts, 0006): the OR of entryBits over its
 * entries, null for a null signature. A walked row whose bits lack an entry's two bits cannot
 * hold that entry, so signatureCheck looks for the entry in the text only when they are all set.
 * The same expression of a needle (`\x01entry\x01`) is that entry's bits.
 */
export function signatureBits(sig: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT bit_or((1::bigint << (b.h & 63)::integer) | (1::bigint << ((b.h >> 6) & 63)::integer)) FROM (SELECT hashtextextended(e.v, 0) AS h FROM unnest(string_to_array(${sig}, chr(1))) AS e(v) WHERE e.v <> '') b)`;
}

/**
 * A value's signature entry: its field id, then the value itself where that is short — a string
 * of at most SIGNATURE_EXACT_BYTES bytes without a \x01 (`12:lead`), a number (`9=1`: an integer
 * below 10^15 in decimal, any other by its 8 bytes in hex, -0 as 0) — so that finding the entry
 * is finding the value; any other string by 32 bits of its hash (`3#5f0e21c4`, hashtextextended
 * of its bytes seeded with the field id), which a search confirms by a probe. The separator tells
 * the three apart (a field id is digits), and a field id has one kind.
 */
function signatureEntry(fieldId: RawBuilder<unknown>, txt: RawBuilder<unknown>, num: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`CASE WHEN ${txt} IS NOT NULL THEN CASE WHEN octet_length(${txt}) <= ${sql.lit(SIGNATURE_EXACT_BYTES)} AND strpos(${txt}, chr(1)) = 0 THEN ${fieldId}::text || ':' || ${txt} ELSE ${fieldId}::text || '#' || to_hex((hashtextextended(${txt}, ${fieldId}) % 2147483647)::integer) END
    ELSE ${fieldId}::text || '=' || CASE WHEN ${num} = trunc(${num}) AND abs(${num}) < 1e15 THEN (${num})::bigint::text ELSE encode(float8send(${num} + 0::float8), 'hex') END END`;
}

/** Strings of at most this many bytes are held in a signature as themselves; a longer one by a hash, and confirmed by a probe. */
export const SIGNATURE_EXACT_BYTES = 16;

/** Values a sort pair row's signature holds at most; a record with more has none and is always probed. */
const SIGNATURE_MAX = 64;

/** Whether a value's signature entry is the value itself (see signatureEntry). */
export function exactInSignature(value: ScalarValue): boolean {
  return typeof value !== 'string' || (Buffer.byteLength(value, 'utf8') <= SIGNATURE_EXACT_BYTES && !value.includes('\x01'));
}

/**
 * The check of "the record has one of `values` under one of `ids`" on a walked sort pair row `r`
 * whose `probe` asks the value index. When every value's signature entry is the value itself
 * (exactInSignature), a row with a signature is answered by it alone: no probe. Otherwise the
 * signature only rules records out (a hash entry may collide): a row probes when one of the
 * entries is there. A row without a signature (more than 64 values) always probes. Each entry,
 * and the complement of its bits (signatureBits), is computed once per statement (uncorrelated
 * subqueries). An entry is looked for in the text only on rows whose bits hold all of its bits
 * (two bigint operations, where `strpos` reads about 150 bytes): the bits never rule out an
 * entry the row holds, since they are the OR of its entries' bits; a row without bits (written
 * before 0006, or by a writer that does not know the column) reads as all bits set.
 */
export function signatureCheck(ids: number[], values: { kind: ValueKind; value: ScalarValue }[], probe: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  const found = ids.flatMap((id) =>
    values.map((v) => {
      const x = sqlValue(v.kind, v.value);
      const entry =
        typeof x === 'string'
          ? signatureEntry(sql`${id}::integer`, sql`(${x}::text COLLATE "C")`, sql`NULL::float8`)
          : signatureEntry(sql`${id}::integer`, sql`NULL::text`, sql`${x}::float8`);
      return sql<SqlBool>`((COALESCE(r.bits, -1::bigint) | (SELECT ~${signatureBits(sql`chr(1) || ${entry} || chr(1)`)})) = -1::bigint AND strpos(r.sig, (SELECT chr(1) || ${entry} || chr(1))) > 0)`;
    }),
  );
  const has = found.length === 1 ? found[0]! : sql<SqlBool>`(${sql.join(found, sql` OR `)})`;
  if (values.every((v) => exactInSignature(v.value))) return sql<SqlBool>`(CASE WHEN r.sig IS NOT NULL THEN ${has} ELSE ${probe} END)`;
  return sql<SqlBool>`((r.sig IS NULL OR ${has}) AND ${probe})`;
}
