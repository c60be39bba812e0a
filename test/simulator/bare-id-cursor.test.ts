/**
 * `pages` rules (src/simulator/rules.ts listPage): a cursor that is a record's id as is
 * (`cursor_form: "{{last.id}}"`, not in an array): the next page starts after the record the id
 * names, newest first or in stored order, and an id no record has is refused; and page numbers
 * counted from 0 (`first_page: 0`) with `{{last_page}}`.
 */
import { describe, expect, it } from 'vitest';
import { listPage, RuleError, type ListRule } from '../../src/simulator/rules.ts';

const rows = ['a1', 'b2', 'c3', 'd4', 'e5'].map((id) => ({ id }));
const source = { size: () => rows.length, slice: (s: number, e: number) => rows.slice(s, e), indexOf: (id: string) => rows.findIndex((r) => r.id === id) };
const link = { origin: 'http://sim', path: '/things' };
const page = (rule: ListRule, query: Record<string, unknown>) =>
  listPage(rule, source, query, undefined, link) as { data: { id: string }[]; next: string | null };

describe('a bare id cursor', () => {
  const rule: ListRule = {
    resource: 'things',
    cursor: 'before',
    cursor_form: '{{last.id}}',
    per_page: 'limit',
    response: { data: '{{records}}', next: '{{next_cursor}}' },
  };

  it('newest first: each page starts after (older than) the id given, and the last page names none', () => {
    const newest = { ...rule, order: 'newest_first' as const };
    expect(page(newest, { limit: 2 })).toEqual({ data: [{ id: 'e5' }, { id: 'd4' }], next: 'd4' });
    expect(page(newest, { limit: 2, before: 'd4' })).toEqual({ data: [{ id: 'c3' }, { id: 'b2' }], next: 'b2' });
    expect(page(newest, { limit: 2, before: 'b2' }).data).toEqual([{ id: 'a1' }]);
    expect(page(newest, { limit: 2, before: 'b2' }).next ?? null).toBeNull();
  });

  it('in stored order, and an unknown id is refused', () => {
    expect(page(rule, { limit: 3, before: 'b2' }).data).toEqual([{ id: 'c3' }, { id: 'd4' }, { id: 'e5' }]);
    expect(() => page(rule, { limit: 3, before: 'zz' })).toThrow(RuleError);
  });
});

describe('pages counted from 0', () => {
  const rule: ListRule = {
    resource: 'things',
    page: 'page',
    first_page: 0,
    default: 2,
    response: { data: '{{records}}', page: '{{page}}', last_page: '{{last_page}}' },
  };

  it('page 0 is the first, the last one says last_page', () => {
    expect(page(rule, {})).toEqual({ data: [{ id: 'a1' }, { id: 'b2' }], page: 0, last_page: false });
    expect(page(rule, { page: 1 })).toEqual({ data: [{ id: 'c3' }, { id: 'd4' }], page: 1, last_page: false });
    expect(page(rule, { page: 2 })).toEqual({ data: [{ id: 'e5' }], page: 2, last_page: true });
  });
});
