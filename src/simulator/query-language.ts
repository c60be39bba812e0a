/**
 * `query` rules of the sidecar: an operation whose query parameter holds a statement of a vendor's
 * SQL-like query language, answered from a resource's records:
 *
 *   SELECT <fields | *> FROM <Name> [WHERE <field> <op> <value> [AND ...]]
 *     [ORDER BY|ORDERBY <field> [ASC|DESC] [, ...]] [LIMIT n] [OFFSET n] [STARTPOSITION n] [MAXRESULTS n]
 *
 * Keywords and field names are case-insensitive, fields may be dotted (`Metadata.LastUpdatedTime`),
 * operators are = != <> < > <= >= LIKE (% and _ wildcards) IN (...) NOT IN (...), values quoted
 * text, numbers, true/false/null or bare date-times (compared as instants). LIMIT caps the rows,
 * OFFSET skips some, STARTPOSITION (from 1) and MAXRESULTS are a start and a page size; a longer
 * answer is paged, the rest behind a locator that a `next` operation takes as a path parameter.
 */
import type { Json } from './description.ts';
import { fill, holds, RuleError } from './rules.ts';

export interface QueryRule {
  /** The query parameter holding the statement. */
  param: string;
  /** The names FROM may give (compared ignoring case) → the resource holding their records. */
  resources: Record<string, string>;
  /** The page size when the statement names none (MAXRESULTS) and no header sets one. */
  page_size: number;
  /** The most one page holds; default page_size. */
  max_page_size?: number;
  /** A request header setting the page size: its `pattern`'s first group, at least `min`. */
  size_header?: { name: string; pattern: string; min?: number };
  /** The operation answering the page behind a locator, and its path parameter holding it. */
  next?: { operation: string; param: string };
  /** Record fields every answer keeps whatever the statement selects (a record's type attributes). */
  keep?: string[];
  /** The answer: {{records}}, {{total}}, {{done}}, {{next_locator}}, {{entity}}, {{start_position}}, {{count}}, {{now}}. */
  response: unknown;
}

type Value = string | number | boolean | null | Value[];
interface Condition {
  field: string;
  op: string;
  value: Value;
}
export interface Statement {
  fields: string[] | '*';
  from: string;
  where: Condition[];
  order: { field: string; desc: boolean }[];
  limit?: number;
  offset: number;
  size?: number;
}

const TOKEN = /\s+|('(?:\\.|[^'\\])*')|(<=|>=|!=|<>|=|<|>|\(|\)|,)|([^\s'(),=<>!]+)/gy;

function tokenize(text: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (m === null) throw new RuleError('malformed_query', `unexpected character at ${at}: ${text.slice(at, at + 10)}`);
    const t = m[1] ?? m[2] ?? m[3];
    if (t !== undefined) out.push(t);
  }
  return out;
}

/** Parse a statement. Throws RuleError malformed_query. */
export function parseStatement(text: string): Statement {
  const tokens = tokenize(text);
  let i = 0;
  const peek = (): string | undefined => tokens[i];
  const is = (word: string): boolean => peek()?.toUpperCase() === word;
  /** Take the next token when it is `word`. */
  const eat = (word: string): boolean => {
    if (!is(word)) return false;
    i++;
    return true;
  };
  const fail = (what: string): never => {
    throw new RuleError('malformed_query', `${what} at ${peek() === undefined ? 'the end' : `'${peek()}'`}`);
  };
  const take = (word?: string): string => {
    const t = peek();
    if (t === undefined || (word !== undefined && t.toUpperCase() !== word)) return fail(`expected ${word ?? 'more'}`);
    i++;
    return t;
  };
  const name = (): string => {
    const t = take();
    if (!/^[A-Za-z_][\w.]*$/.test(t)) fail(`expected a field name, not '${t}'`);
    return t;
  };
  const integer = (): number => {
    const t = take();
    if (!/^\d+$/.test(t)) fail(`expected a number, not '${t}'`);
    return Number(t);
  };
  const value = (): Value => {
    const t = take();
    if (t.startsWith("'")) return t.slice(1, -1).replace(/\\(.)/g, '$1');
    if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
    const word = t.toLowerCase();
    if (word === 'true' || word === 'false') return word === 'true';
    if (word === 'null') return null;
    if (/^\d{4}-\d{2}-\d{2}/.test(t)) return t;
    return fail(`expected a value, not '${t}'`);
  };
  take('SELECT');
  let fields: string[] | '*' = '*';
  if (!eat('*')) {
    fields = [name()];
    while (eat(',')) fields.push(name());
  }
  take('FROM');
  const st: Statement = { fields, from: name(), where: [], order: [], offset: 0 };
  if (is('WHERE')) {
    do {
      i++;
      const field = name();
      let op = take().toUpperCase();
      if (op === 'NOT') op = `NOT ${take('IN')}`;
      if (!['=', '!=', '<>', '<', '>', '<=', '>=', 'LIKE', 'IN', 'NOT IN'].includes(op)) fail(`unknown operator '${op}'`);
      let v: Value;
      if (op.endsWith('IN')) {
        take('(');
        v = [value()];
        while (eat(',')) v.push(value());
        take(')');
      } else v = value();
      st.where.push({ field, op, value: v });
    } while (is('AND'));
  }
  // ORDER BY, or ORDERBY as one word.
  if (eat('ORDERBY') || (eat('ORDER') && take('BY'))) {
    do {
      const field = name();
      const desc = eat('DESC');
      if (!desc) eat('ASC');
      st.order.push({ field, desc });
    } while (eat(','));
  }
  for (;;) {
    if (eat('LIMIT')) st.limit = integer();
    else if (eat('OFFSET')) st.offset = integer();
    else if (eat('STARTPOSITION')) st.offset = Math.max(integer() - 1, 0);
    else if (eat('MAXRESULTS')) st.size = integer();
    else break;
  }
  if (peek() !== undefined) fail('unexpected');
  return st;
}

/** A record's dotted field, each step matched ignoring case; `key` the record's own spelling of the path. */
function lookup(record: unknown, path: string): { found: boolean; value: unknown; key: string[] } {
  let v = record;
  const key: string[] = [];
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return { found: false, value: undefined, key };
    const own = Object.keys(v).find((k) => k.toLowerCase() === part.toLowerCase());
    if (own === undefined) return { found: false, value: undefined, key };
    key.push(own);
    v = (v as Json)[own];
  }
  return { found: true, value: v, key };
}

const MEANING: Record<string, 'lt' | 'gt' | 'lte' | 'gte'> = { '<': 'lt', '>': 'gt', '<=': 'lte', '>=': 'gte' };
const equal = (a: unknown, b: Value): boolean =>
  typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : b === null ? a === null || a === undefined : holds('eq', a, b);

function matches(c: Condition, actual: unknown): boolean {
  const list = Array.isArray(c.value) ? c.value : [c.value];
  switch (c.op) {
    case '=':
      return equal(actual, c.value);
    case '!=':
    case '<>':
      return !equal(actual, c.value);
    case 'IN':
      return list.some((v) => equal(actual, v));
    case 'NOT IN':
      return !list.some((v) => equal(actual, v));
    case 'LIKE': {
      const re = new RegExp(
        `^${String(c.value)
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          .replace(/%/g, '.*')
          .replace(/_/g, '.')}$`,
        'is',
      );
      return typeof actual === 'string' && re.test(actual);
    }
    default:
      return holds(MEANING[c.op]!, actual, c.value);
  }
}

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1; // nulls last
  if (b === undefined || b === null) return -1;
  if (holds('lt', a, b)) return -1;
  if (holds('gt', a, b)) return 1;
  return String(a).localeCompare(String(b));
}

/** The record cut to the selected fields (in the record's own spelling), plus the rule's `keep`. */
function project(record: Json, fields: string[], keep: string[]): Json {
  const out: Json = {};
  for (const k of keep) if (record[k] !== undefined) out[k] = record[k] as Json;
  for (const f of fields) {
    const { value, key } = lookup(record, f);
    let at = out;
    key.slice(0, -1).forEach((k) => (at = (at[k] ??= {}) as Json));
    at[key.at(-1)!] = (value ?? null) as Json;
  }
  return out;
}

/** Rows of a statement over a resource's records (its fields checked against them). Throws RuleError. */
export function runStatement(st: Statement, records: Json[], keep: string[] = []): Json[] {
  const named = [...(st.fields === '*' ? [] : st.fields), ...st.where.map((c) => c.field), ...st.order.map((o) => o.field)];
  for (const f of named)
    if (records.length > 0 && !records.some((r) => lookup(r, f).found)) throw new RuleError('invalid_field', `No such column '${f}' on entity '${st.from}'`, f);
  const rows = records.filter((r) => st.where.every((c) => matches(c, lookup(r, c.field).value)));
  if (st.order.length > 0)
    rows.sort((a, b) => {
      for (const o of st.order) {
        const c = compare(lookup(a, o.field).value, lookup(b, o.field).value);
        if (c !== 0) return o.desc ? -c : c;
      }
      return 0;
    });
  const cut = rows.slice(st.offset, st.limit === undefined ? undefined : st.offset + st.limit);
  return st.fields === '*' ? cut : cut.map((r) => project(r, st.fields as string[], keep));
}

const encodeLocator = (statement: string, at: number): string => `${Buffer.from(statement).toString('base64url')}-${at}`;

/**
 * Answer a query (`statement`) or the page behind a locator: `records(resource)` gives a
 * resource's records in stored order. Throws RuleError (malformed_query, invalid_type, invalid_field, invalid_locator).
 */
export function answerQuery(
  rule: QueryRule,
  request: { statement?: unknown; locator?: string; headers?: Record<string, string | string[] | undefined> | undefined },
  records: (resource: string) => Json[],
): unknown {
  let text = request.statement;
  let at = 0;
  if (request.locator !== undefined) {
    const m = /^([A-Za-z0-9_-]+)-(\d+)$/.exec(request.locator);
    if (m === null) throw new RuleError('invalid_locator', `invalid query locator: ${request.locator}`);
    [text, at] = [Buffer.from(m[1]!, 'base64url').toString('utf8'), Number(m[2])];
  }
  if (typeof text !== 'string' || text.trim() === '') throw new RuleError('malformed_query', `the ${rule.param} parameter holds no query`, rule.param);
  const st = parseStatement(text);
  const entity = Object.keys(rule.resources).find((k) => k.toLowerCase() === st.from.toLowerCase());
  if (entity === undefined) throw new RuleError('invalid_type', `sObject type '${st.from}' is not supported.`);
  const rows = runStatement(st, records(rule.resources[entity]!), rule.keep);
  const header = rule.size_header === undefined ? undefined : request.headers?.[rule.size_header.name.toLowerCase()];
  const asked = header === undefined ? undefined : new RegExp(rule.size_header!.pattern).exec(String(header))?.[1];
  const size = Math.min(st.size ?? Math.max(Number(asked ?? rule.page_size), rule.size_header?.min ?? 1), rule.max_page_size ?? rule.page_size);
  const page = rows.slice(at, at + size);
  const done = at + size >= rows.length;
  return fill(rule.response, {
    records: page,
    total: rows.length,
    done,
    next_locator: done ? undefined : encodeLocator(text, at + size),
    entity,
    start_position: st.offset + at + 1,
    count: page.length,
    now: new Date().toISOString(),
  });
}
