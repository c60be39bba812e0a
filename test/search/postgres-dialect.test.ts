/**
 * The PostgreSQL SQL of a remembered query shape: kept prepared, with every constant and value
 * read through a one-row subquery (so PostgreSQL settles on a generic plan), the cursor's rid left
 * bare, and the text left as it is when its placeholders do not match its parameters.
 */
import { describe, expect, it } from 'vitest';
import { postgresSearchDialect } from '../../src/search/postgres-dialect.ts';
import { PREPARED_SQL } from '../../src/store/database.ts';

describe('postgresSearchDialect.reusableSql', () => {
  it('hides constants and values behind typed subqueries and leaves the cursor rid bare', () => {
    const text = 'SELECT x.rid FROM search_values x WHERE x.field_id = $1 AND x.txt = $2 AND x.num = $3 AND x.rid > $4 AND s.entity = $5';
    expect(postgresSearchDialect.reusableSql(text, [7, 'ada@example.com', 2.5, 42, 'contacts'], ['constant', 'value', 'value', 'cursor', 'constant'])).toBe(
      `${PREPARED_SQL}SELECT x.rid FROM search_values x WHERE x.field_id = (SELECT $1::bigint) AND x.txt = (SELECT $2::text) AND x.num = (SELECT $3::double precision) AND x.rid > $4 AND s.entity = (SELECT $5::text)`,
    );
    // An integer value is still compared as a number value (double precision), never as an id.
    expect(postgresSearchDialect.reusableSql('SELECT 1 WHERE x.num = $1', [3], ['value'])).toBe(
      `${PREPARED_SQL}SELECT 1 WHERE x.num = (SELECT $1::double precision)`,
    );
    // $10 is the tenth parameter, not $1 followed by a 0.
    const ten = Array.from({ length: 10 }, (_, i) => `a${i} = $${i + 1}`).join(' AND ');
    expect(
      postgresSearchDialect.reusableSql(
        ten,
        Array.from({ length: 10 }, (_, i) => i),
        Array(10).fill('constant'),
      ),
    ).toBe(PREPARED_SQL + Array.from({ length: 10 }, (_, i) => `a${i} = (SELECT $${i + 1}::bigint)`).join(' AND '));
  });

  it('reads a list cast where it is used as the text of its array literal', () => {
    const text = 'SELECT t.rid FROM search_text t WHERE t.words && $1::text[] AND t.rid = ANY($2::bigint[]) AND t.rid > $3';
    expect(postgresSearchDialect.reusableSql(text, [['3_smith'], [1, 2], 5], ['value', 'value', 'constant'])).toBe(
      `${PREPARED_SQL}SELECT t.rid FROM search_text t WHERE t.words && (SELECT $1::text)::text[] AND t.rid = ANY((SELECT $2::text)::bigint[]) AND t.rid > (SELECT $3::bigint)`,
    );
    // A list not followed by a cast has no type to be read as: the text stays as it is.
    expect(postgresSearchDialect.reusableSql('SELECT 1 WHERE a = ANY($1)', [[1]], ['value'])).toBe(`${PREPARED_SQL}SELECT 1 WHERE a = ANY($1)`);
  });

  it('leaves the text as it is when placeholders and parameters do not match or a type is unexpected', () => {
    const text = 'SELECT 1 WHERE a = $1 AND b = $2';
    expect(postgresSearchDialect.reusableSql(text, [1, 2, 3], ['constant', 'constant', 'constant'])).toBe(PREPARED_SQL + text);
    expect(postgresSearchDialect.reusableSql(text, [1, null], ['constant', 'value'])).toBe(PREPARED_SQL + text);
    expect(postgresSearchDialect.reusableSql(text, [1, 2], ['constant', 'value'])).toBe(
      `${PREPARED_SQL}SELECT 1 WHERE a = (SELECT $1::bigint) AND b = (SELECT $2::double precision)`,
    );
  });
});
