/**
 * The SQL of a page (pageQuery: a walk in result order, or a page driven by a set), of a bounded
 * count (the planner's), and of a capped one-pass page from a set (cappedSetPage).
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { CursorPosition } from './cursor.ts';
import type { SearchDialect } from './dialect.ts';
import { and, leafCondition, not, or, type Pred, type ScalarLeaf } from './predicates.ts';
import type { SortKey } from './query.ts';

/**
 * `LIMIT n` with n as a literal. A bound LIMIT costs SQLite about 10 µs per run of a statement
 * (measured with better-sqlite3 on a one-row page: 15 µs with `LIMIT ?`, 6 µs with `LIMIT 1001`),
 * more than the rest of an indexed eq lookup. Page sizes are few (limit + 1, confirm batches),
 * so the statements stay few; n is checked to be a non-negative safe integer.
 */
export function limitClause(n: number): RawBuilder<unknown> {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`invalid LIMIT ${n}`);
  return sql`LIMIT ${sql.lit(n)}`;
}

/** One sort key as joined into a page query; `expr` null when the field has never had a value. */
interface JoinedKey {
  expr: RawBuilder<unknown> | null;
  dir: 'asc' | 'desc';
  nullable: boolean;
}

/** "After the cursor" for keys ordered with nulls last, then rid in `tieDir`. */
function keysetPredicate(keys: JoinedKey[], values: (string | number | null)[], rid: RawBuilder<unknown>, afterRid: number, tieDir: 'asc' | 'desc'): Pred {
  const ridAfter = sql<SqlBool>`${rid} ${sql.raw(tieDir === 'asc' ? '>' : '<')} ${afterRid}`;
  const only = keys[0];
  const v0 = values[0];
  // One non-null key in the tie direction: a row-value comparison both databases can answer
  // with a range scan of the (field_id, value, rid) index.
  if (keys.length === 1 && only !== undefined && only.expr !== null && !only.nullable && v0 !== null && v0 !== undefined && only.dir === tieDir) {
    return sql<SqlBool>`(${only.expr}, ${rid}) ${sql.raw(tieDir === 'asc' ? '>' : '<')} (${v0}, ${afterRid})`;
  }
  const terms: Pred[] = [];
  const prefix: Pred[] = [];
  keys.forEach((key, i) => {
    const c = values[i] ?? null;
    let after: Pred;
    let equal: Pred;
    if (key.expr === null) {
      // Every record is null here: null sorts after any value and equals only null.
      after = c !== null;
      equal = c === null;
    } else if (c === null) {
      after = false;
      equal = sql<SqlBool>`${key.expr} IS NULL`;
    } else {
      const beyond = sql<SqlBool>`${key.expr} ${sql.raw(key.dir === 'asc' ? '>' : '<')} ${c}`;
      after = key.nullable ? or([beyond, sql<SqlBool>`${key.expr} IS NULL`]) : beyond;
      equal = sql<SqlBool>`${key.expr} = ${c}`;
    }
    terms.push(and([...prefix, after]));
    prefix.push(equal);
  });
  terms.push(and([...prefix, ridAfter]));
  return or(terms);
}

export interface SortPlan {
  key: SortKey;
  /** The field id holding this key's values, if the field has ever had one. */
  fieldId: number | undefined;
}

export interface PageRow {
  rid: number;
  record: unknown;
  keys: (string | number | null)[];
}

/**
 * The SQL of one page segment. Sorting puts records without a value for a key after the others
 * (asc and desc alike), and breaks ties by rid in the last key's direction. So that the first
 * sort key can be read from its index in order, a sorted query runs in two segments: records
 * having a value for the first key (phase "values"), then those without (phase "nulls").
 *
 * With a `driver` set, the page is computed from that set's records (then sorted); without, by
 * walking records in result order — the first sort key's index, or rids — checking each.
 */
export function pageQuery(
  dialect: SearchDialect,
  scopeId: number,
  filter: Pred,
  sort: SortPlan[],
  phase: 'none' | 'values' | 'nulls',
  after: CursorPosition | undefined,
  limit: number,
  /** Conditions on the first sort key, applied to its index scan in the values phase. */
  sortLeaves: ScalarLeaf[] = [],
  driver?: RawBuilder<unknown>,
  /** Instead of `driver`, the `ordered` arms (see Compiled) of an unsorted query: each read in rid order up to the limit. */
  driverArms?: RawBuilder<unknown>[],
  /** Further columns of every row, uncorrelated (the scope's state, see RecordStore.search). */
  extra?: RawBuilder<unknown>,
  /**
   * The values phase of a walk: walk this sort pair's rows with key value `value` (schema.ts,
   * 0004) instead of the first sort key's index; `filter` then omits the equality it stands for.
   */
  pair?: { pairId: number; value: string },
): RawBuilder<Record<string, unknown>> {
  if (dialect.name === 'sqlite' && driverArms?.length === 1 && sort.length === 0 && phase === 'none')
    return sqliteArmPage(scopeId, filter, after, limit, driverArms[0]!);
  const tieDir = sort.at(-1)?.key.dir ?? 'asc';
  const where: Pred[] = [filter];
  const joins: RawBuilder<unknown>[] = [];
  const columns: RawBuilder<unknown>[] = [];
  const keys: JoinedKey[] = [];
  sort.forEach((s, i) => {
    const alias = `s${i}`;
    const col = dialect.valueColumn(alias, s.key.kind);
    if (i === 0 && phase === 'nulls') {
      columns.push(sql`NULL AS ${sql.ref(`k${i}`)}`);
      return;
    }
    if (s.fieldId === undefined) {
      columns.push(sql`NULL AS ${sql.ref(`k${i}`)}`);
      keys.push({ expr: null, dir: s.key.dir, nullable: true });
      return;
    }
    if (i > 0)
      joins.push(sql`LEFT JOIN search_values ${sql.table(alias)} ON ${sql.ref(`${alias}.rid`)} = r.rid AND ${sql.ref(`${alias}.field_id`)} = ${s.fieldId}`);
    columns.push(sql`${col} AS ${sql.ref(`k${i}`)}`);
    keys.push({ expr: col, dir: s.key.dir, nullable: i > 0 });
  });
  const order = keys
    .filter((k) => k.expr !== null)
    .map((k) => sql`${k.expr} ${sql.raw(k.dir === 'asc' ? 'ASC' : 'DESC')}${k.nullable ? sql` NULLS LAST` : sql``}`);

  const join = dialect.orderedJoin;
  let driving: RawBuilder<unknown> | undefined;
  if (driverArms !== undefined && driverArms.length > 0 && sort.length === 0) {
    const afterRid = after === undefined ? sql`` : sql` WHERE a.rid > ${after.rid}`;
    const arms = driverArms.map((arm) => sql`SELECT a.rid FROM (${arm}) a${afterRid} ORDER BY a.rid ${limitClause(limit)}`);
    // Several arms: each limited, wrapped (SQLite takes no ORDER BY in a compound's arm), then merged.
    const merged =
      arms.length === 1
        ? arms[0]!
        : sql`SELECT u.rid FROM (${sql.join(
            arms.map((a, i) => sql`SELECT * FROM (${a}) ${sql.table(`a${i}`)}`),
            sql` UNION ALL `,
          )}) u ORDER BY u.rid ${limitClause(limit)}`;
    driving = sql`${dialect.driver(merged)} d`;
  } else if (driver !== undefined) driving = sql`${dialect.driver(sql`SELECT DISTINCT dd.rid FROM (${driver}) dd`)} d`;
  let from: RawBuilder<unknown>;
  let rid: RawBuilder<unknown>;
  let record = sql`r.record`;
  if (phase === 'values' && driving === undefined && dialect.name === 'postgres') {
    // PostgreSQL, a walk of the first sort key's index: the walked value rows are aliased `r`,
    // so the checks (correlated on r.rid) filter the index scan itself, and the record is read
    // by a subquery for the rows kept only. Joined to search_records instead, PostgreSQL
    // evaluates the checks at the join, reading the record of every row walked (7.5 vs 3.0 ms
    // for the benchmark's nested query at 20,000 contacts, 1,100 rows walked for 101 kept).
    // A sort pair row carries a copy of its record (schema.ts, 0006), read where it is there
    // (COALESCE reads search_records only for a row without one, from an older writer).
    const first = sort[0]!;
    const col = dialect.valueColumn('r', first.key.kind);
    columns[0] = sql`${col} AS ${sql.ref('k0')}`;
    keys[0] = { ...keys[0]!, expr: col };
    order[0] = sql`${col} ${sql.raw(first.key.dir === 'asc' ? 'ASC' : 'DESC')}`;
    from = pair === undefined ? sql`search_values r` : sql`search_pairs r`;
    rid = sql.ref('r.rid');
    record =
      pair === undefined
        ? sql`(SELECT rec.record FROM search_records rec WHERE rec.rid = r.rid)`
        : sql`COALESCE(r.record, (SELECT rec.record FROM search_records rec WHERE rec.rid = r.rid))`;
    const walked = pair === undefined ? sql<SqlBool>`r.field_id = ${first.fieldId!}` : sql<SqlBool>`r.pair_id = ${pair.pairId} AND r.kv = ${pair.value}`;
    where.unshift(sql<SqlBool>`${walked} AND ${col} IS NOT NULL`, ...sortLeaves.map((l) => leafCondition(dialect, l, col)));
  } else if (phase === 'values') {
    const first = sort[0]!;
    const col = dialect.valueColumn('s0', first.key.kind);
    // Walking s0 reads the (field_id, value, rid) index in sort order and stops at the limit.
    const walkPair = pair !== undefined && driving === undefined;
    from =
      driving === undefined
        ? sql`${walkPair ? sql`search_pairs` : sql`search_values`} s0 ${join} search_records r ON r.rid = s0.rid`
        : sql`${driving} ${join} search_values s0 ON s0.rid = d.rid ${join} search_records r ON r.rid = d.rid`;
    rid = sql.ref('s0.rid');
    const walked = walkPair ? sql<SqlBool>`s0.pair_id = ${pair.pairId} AND s0.kv = ${pair.value}` : sql<SqlBool>`s0.field_id = ${first.fieldId!}`;
    where.unshift(sql<SqlBool>`${walked} AND ${col} IS NOT NULL`, ...sortLeaves.map((l) => leafCondition(dialect, l, col)));
  } else if (phase === 'none' && sort.length === 0 && driver !== undefined && driverArms === undefined && dialect.name === 'postgres') {
    // PostgreSQL, an unsorted page driven by a set: as for walks above, the set's rows are
    // aliased `r`, so the checks filter them before any record is read, and records are read
    // for the rows kept only (an `any` over a tag name and id: 502 records read for 202 kept
    // before). Every driving set lists records of this scope only (its field ids and word
    // tokens are the scope's), so no scope check is needed.
    from = sql`${dialect.driver(sql`SELECT DISTINCT dd.rid FROM (${driver}) dd`)} r`;
    rid = sql.ref('r.rid');
    record = sql`(SELECT rec.record FROM search_records rec WHERE rec.rid = r.rid)`;
  } else {
    from = driving === undefined ? sql`search_records r` : sql`${driving} ${join} search_records r ON r.rid = d.rid`;
    rid = sql.ref('r.rid');
    where.unshift(sql<SqlBool>`r.scope_id = ${scopeId}`);
    const first = sort[0];
    if (phase === 'nulls' && first?.fieldId !== undefined) {
      where.push(not(dialect.exists(sql`SELECT 1 FROM search_values z WHERE z.rid = r.rid AND z.field_id = ${first.fieldId}`)));
    }
  }
  if (after !== undefined) {
    const values = phase === 'nulls' ? after.values.slice(1) : after.values;
    where.push(keysetPredicate(keys, values, rid, after.rid, tieDir));
  }
  order.push(sql`${rid} ${sql.raw(tieDir === 'asc' ? 'ASC' : 'DESC')}`);
  const predicate = and(where);
  if (extra !== undefined) columns.push(extra);
  return sql<Record<string, unknown>>`SELECT ${rid} AS rid, ${record} AS record${columns.length ? sql`, ${sql.join(columns)}` : sql``}
    FROM ${from} ${sql.join(joins, sql` `)}
    WHERE ${predicate === true ? sql`1 = 1` : predicate === false ? sql`1 = 0` : predicate}
    ORDER BY ${sql.join(order)}
    ${limitClause(limit)}`;
}

/**
 * SQLite: an unsorted page read from one index-ordered arm, written flat — the arm joined to its
 * records and ordered by the arm's rid — so that SQLite flattens the arm into the join and reads
 * the (field_id, v, rid) index or the FTS5 rowids in order, stopping at the limit, without a
 * sorter (the nested form, the arm limited then joined and ordered by r.rid, sorts every page in
 * a temporary B-tree: 67 vs 45 µs for a keyword page of 25 records, 6.0 vs 4.7 µs for an eq).
 */
function sqliteArmPage(
  scopeId: number,
  filter: Pred,
  after: CursorPosition | undefined,
  limit: number,
  arm: RawBuilder<unknown>,
): RawBuilder<Record<string, unknown>> {
  const where = and([sql<SqlBool>`r.scope_id = ${scopeId}`, after === undefined ? true : sql<SqlBool>`a.rid > ${after.rid}`, filter]);
  return sql<Record<string, unknown>>`SELECT a.rid AS rid, r.record AS record
    FROM (${arm}) a CROSS JOIN search_records r ON r.rid = a.rid
    WHERE ${where === false ? sql`1 = 0` : (where as RawBuilder<SqlBool>)}
    ORDER BY a.rid
    ${limitClause(limit)}`;
}

/** A bounded count of a set's rows: the exact count below `cap`, else `cap`; kept prepared (SearchDialect.repeated) unless `planByValue`. */
export function boundedCount(
  set: RawBuilder<unknown>,
  cap: number,
  dialect?: SearchDialect,
  planByValue = false,
  extra?: RawBuilder<unknown>,
): RawBuilder<{ n: number | string }> {
  return sql<{
    n: number | string;
  }>`${dialect === undefined || planByValue ? sql`` : dialect.repeated}SELECT count(*) AS n${extra === undefined ? sql`` : sql`, ${extra}`} FROM (SELECT 1 AS one FROM (${set}) e ${limitClause(cap)}) c`;
}

/**
 * One pass over a set (a subquery with a `rid` column, possibly repeating a record): read at most
 * `cap` of its entries after `afterRid`, and return the first `limit` of their records in rid
 * order, each row also carrying `n`, the number of entries read. Below the cap the set was read
 * whole and the page is exact; at the cap the caller must not trust it.
 */
export function cappedSetPage(
  dialect: SearchDialect,
  scopeId: number,
  set: RawBuilder<unknown>,
  afterRid: number | undefined,
  cap: number,
  limit: number,
  planByValue = false,
  extra?: RawBuilder<unknown>,
): RawBuilder<{ rid: number | string; record: unknown; n: number | string }> {
  const after = afterRid === undefined ? sql`` : sql` WHERE e.rid > ${afterRid}`;
  return sql<{
    rid: number | string;
    record: unknown;
    n: number | string;
  }>`${planByValue ? sql`` : dialect.repeated}WITH c AS MATERIALIZED (SELECT e.rid FROM (${set}) e${after} LIMIT ${cap})
    SELECT r.rid AS rid, r.record AS record, (SELECT count(*) FROM c) AS n${extra === undefined ? sql`` : sql`, ${extra}`}
    FROM ${dialect.driver(sql`SELECT DISTINCT c.rid FROM c ORDER BY c.rid ${limitClause(limit)}`)} d ${dialect.orderedJoin} search_records r ON r.rid = d.rid
    WHERE r.scope_id = ${scopeId}
    ORDER BY r.rid
    ${limitClause(limit)}`;
}
