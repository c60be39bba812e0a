/**
 * The sidecar's `query` rules (src/simulator/query-language.ts): a SQL-like statement in a query
 * parameter answered from a resource's records — fields selected, WHERE conditions, ORDER BY,
 * LIMIT/OFFSET and STARTPOSITION/MAXRESULTS, pages behind a locator — in two vendors' dialects.
 */
import { describe, expect, it } from 'vitest';
import type { Json } from '../../src/simulator/description.ts';
import { answerQuery, parseStatement, type QueryRule } from '../../src/simulator/query-language.ts';
import { RuleError } from '../../src/simulator/rules.ts';

const accounts: Json[] = [1, 2, 3, 4, 5].map((n) => ({
  attributes: { type: 'Account' },
  Id: `001${n}`,
  Name: `Account ${n}`,
  Industry: n % 2 === 0 ? 'Banking' : 'Retail',
  Employees: n * 10,
  SystemModstamp: `2026-01-0${n}T00:00:00.000+0000`,
  Metadata: { LastUpdatedTime: `2026-01-0${n}T00:00:00-08:00` },
}));

const soql: QueryRule = {
  param: 'q',
  resources: { Account: 'accounts' },
  page_size: 2000,
  size_header: { name: 'Sforce-Query-Options', pattern: 'batchSize=(\\d+)', min: 2 },
  next: { operation: 'GET /query/{locator}', param: 'locator' },
  keep: ['attributes'],
  response: { totalSize: '{{total}}', done: '{{done}}', 'nextRecordsUrl?': '/query/{{next_locator}}', records: '{{records}}' },
};
const run = (rule: QueryRule, request: Parameters<typeof answerQuery>[1]) => answerQuery(rule, request, () => accounts) as Json;
const ruleError = (f: () => unknown): RuleError => {
  try {
    f();
  } catch (e) {
    if (e instanceof RuleError) return e;
    throw e;
  }
  throw new Error('no RuleError');
};

describe('query rules', () => {
  it('selects fields in the record spelling, filters with AND, orders and limits', () => {
    const answer = run(soql, {
      statement: "select id, name from account where industry = 'retail' and SystemModstamp > 2026-01-01T00:00:00Z order by Employees desc limit 5",
    });
    expect(answer).toEqual({
      totalSize: 2,
      done: true,
      records: [
        { attributes: { type: 'Account' }, Id: '0015', Name: 'Account 5' },
        { attributes: { type: 'Account' }, Id: '0013', Name: 'Account 3' },
      ],
    });
    const like = run(soql, { statement: "SELECT Id FROM Account WHERE Name LIKE 'account _' AND Id NOT IN ('0011', '0012') OFFSET 1" });
    expect((like['records'] as Json[]).map((r) => r['Id'])).toEqual(['0014', '0015']);
  });

  it('pages behind a locator, the page size from a header, until done', () => {
    const headers = { 'sforce-query-options': 'batchSize=2' };
    const first = run(soql, { statement: 'SELECT Id FROM Account ORDER BY SystemModstamp', headers });
    expect(first).toMatchObject({ totalSize: 5, done: false });
    const ids = (first['records'] as Json[]).map((r) => r['Id']);
    let next = first['nextRecordsUrl'] as string | undefined;
    while (next !== undefined) {
      const page = run(soql, { locator: next.split('/').at(-1)!, headers });
      ids.push(...(page['records'] as Json[]).map((r) => r['Id']));
      next = page['nextRecordsUrl'] as string | undefined;
    }
    expect(ids).toEqual(['0011', '0012', '0013', '0014', '0015']);
  });

  it('reads the other dialect: select *, dotted fields, STARTPOSITION and MAXRESULTS, the answer keyed by the entity', () => {
    const qbo: QueryRule = {
      param: 'query',
      resources: { Customer: 'accounts' },
      page_size: 100,
      max_page_size: 1000,
      response: { QueryResponse: { '{{entity}}': '{{records}}', startPosition: '{{start_position}}', maxResults: '{{count}}' } },
    };
    const answer = run(qbo, {
      statement:
        "select * from customer where Metadata.LastUpdatedTime >= '2026-01-02T00:00:00-08:00' orderby Metadata.LastUpdatedTime startposition 2 maxresults 2",
    });
    const response = answer['QueryResponse'] as Json;
    expect(response).toMatchObject({ startPosition: 2, maxResults: 2 });
    expect((response['Customer'] as Json[]).map((r) => r['Id'])).toEqual(['0013', '0014']);
    expect((response['Customer'] as Json[])[0]).toEqual(accounts[2]);
  });

  it('refuses what it cannot answer: malformed statements, unknown types and fields, foreign locators', () => {
    expect(ruleError(() => run(soql, { statement: 'SELECT Id Account' })).code).toBe('malformed_query');
    expect(ruleError(() => run(soql, { statement: "SELECT Id FROM Account WHERE Name ~ 'x'" })).code).toBe('malformed_query');
    expect(ruleError(() => run(soql, { statement: 'SELECT Id FROM Widget' })).code).toBe('invalid_type');
    const unknown = ruleError(() => run(soql, { statement: 'SELECT Id, Nmae FROM Account' }));
    expect([unknown.code, unknown.message]).toEqual(['invalid_field', "No such column 'Nmae' on entity 'Account'"]);
    expect(ruleError(() => run(soql, { locator: 'not a locator' })).code).toBe('invalid_locator');
    expect(parseStatement('SELECT Id FROM Account WHERE IsDeleted = false AND Amount >= 10.5')).toMatchObject({
      where: [
        { field: 'IsDeleted', op: '=', value: false },
        { field: 'Amount', op: '>=', value: 10.5 },
      ],
    });
  });
});
