/**
 * Manifest names for a description's parameters. Names that differ only by punctuation must not
 * become one param: a comparison suffix (`DateSent<`, `DateSent>=`) is named
 * (`date_sent_before`, `date_sent_on_or_after`; `_lt`, `_gte` for numbers), and any other clash
 * is told apart by where the param goes, then by a number, with a `# check:` guess.
 */
import { safeName } from '../scaffold.ts';

/** Comparison operators a query param's name may end with, longest first: [operator, for dates, for other values]. */
const OPERATORS: [string, string, string][] = [
  ['<=', 'on_or_before', 'lte'],
  ['>=', 'on_or_after', 'gte'],
  ['!=', 'not', 'not'],
  ['<', 'before', 'lt'],
  ['>', 'after', 'gt'],
  ['=', 'eq', 'eq'],
];

const DATE_FORMATS = new Set(['date', 'date-time']);
const DATE_NAME = /(date|time|_at$|At$|since|until)/;

/** The param's manifest name, and why it is not the plain snake_case of the description's name (a guess), if it is not. */
export function paramName(raw: string, where: string, schema: Record<string, unknown> | undefined, taken: Set<string>): { name: string; why?: string } {
  const trimmed = raw.trim();
  const op = OPERATORS.find(([o]) => trimmed.endsWith(o) && trimmed.length > o.length);
  let name = safeName(raw);
  let why: string | undefined;
  if (op !== undefined) {
    const base = trimmed.slice(0, -op[0].length);
    const dated = (typeof schema?.['format'] === 'string' && DATE_FORMATS.has(schema['format'])) || DATE_NAME.test(base);
    name = safeName(`${base}_${dated ? op[1] : op[2]}`);
    why = `"${raw}": ${base} ${op[0]} the value`;
  }
  if (taken.has(name)) {
    const first = name;
    name = safeName(`${where}_${first}`);
    for (let i = 2; taken.has(name); i++) name = `${first}_${i}`;
    why = `renamed: "${raw}" is also the name of another ${where === 'body' ? 'path or query ' : ''}param (${first})`;
  }
  taken.add(name);
  return { name, ...(why !== undefined ? { why } : {}) };
}
