/**
 * `switchboard init --report`: what init inferred, per auth variant, entity and action (request
 * path and method, params, where the records are, primary key, pagination), and how sure it is:
 * `certain` when it is read from the description as it stands, `guessed` with the guess's reason
 * (the `# check:` comments), `not inferred` with the report's line. A person reviewing a scaffold
 * reads the guessed and not-inferred lines first.
 */
import type { Guess, Scaffold } from './scaffold.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The guesses whose path starts with `prefix` (and, when given, is not under any of `except`). */
function under(guesses: Guess[], prefix: (string | number)[], except: (string | number)[][] = []): Guess[] {
  const starts = (g: Guess, p: (string | number)[]): boolean => p.every((k, i) => g.path[i] === k);
  return guesses.filter((g) => starts(g, prefix) && !except.some((e) => starts(g, [...prefix, ...e])));
}

/** One line: what, its value, and how sure. */
function line(indent: string, what: string, value: string, guesses: Guess[], certain: string, notInferred: string[] = []): string {
  const sure =
    notInferred.length > 0
      ? `not inferred: ${notInferred.join('; ')}`
      : guesses.length > 0
        ? `guessed: ${[...new Set(guesses.map((g) => g.message))].join('; ')}`
        : `certain: ${certain}`;
  return `${indent}${what}: ${value} — ${sure}`;
}

const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** The report as text, one line per inferred thing. */
export function renderReport(s: Scaffold): string {
  const m = s.manifest;
  const g = s.guesses;
  const out: string[] = [`What \`switchboard init\` inferred for ${s.type}, and how sure it is (review the guessed and not inferred lines):`, ''];
  out.push(
    line(
      '',
      'base URL',
      show((m['base_url'] as Obj | undefined)?.['default']),
      under(g, ['base_url']),
      "the description's server",
      s.report.filter((r) => r.startsWith('base URL')),
    ),
  );
  const auth = Array.isArray(m['auth']) ? (m['auth'] as Obj[]) : [];
  auth.forEach((v, i) => {
    const fields = Object.keys(isObj(v['fields']) ? v['fields'] : {}).join(', ');
    const scopes = Array.isArray(v['scopes']) ? `, scopes ${(v['scopes'] as unknown[]).join(' ')}` : '';
    out.push(
      line('', `auth ${String(v['name'])}`, `${String(v['type'])} (fields ${fields}${scopes})`, under(g, ['auth', i]), "the description's security scheme"),
    );
  });
  const headers = Object.keys(isObj(m['headers']) ? m['headers'] : {}).filter((h) => h !== 'Accept');
  if (headers.length > 0) out.push(line('', 'headers on every request', headers.join(', '), under(g, ['headers']), 'declared by the description'));
  if (m['check'] !== undefined)
    out.push(
      line('', 'credential check', show((m['check'] as Obj)['request'] ?? (m['check'] as Obj)['graphql']), under(g, ['check']), 'a "who am I" operation'),
    );
  for (const [name, e] of Object.entries(isObj(m['entities']) ? (m['entities'] as Record<string, Obj>) : {})) {
    out.push('', `entity ${name}`);
    const at = ['entities', name];
    out.push(line('  ', 'primary key', show(e['primary_key']), under(g, [...at, 'primary_key']), "the record's id field"));
    out.push(
      line(
        '  ',
        'record',
        `${Object.keys(isObj(e['record']) && isObj(e['record']['properties']) ? e['record']['properties'] : {}).length} fields`,
        under(g, [...at, 'record']),
        'the response schema',
      ),
    );
    for (const [action, a] of Object.entries(isObj(e['actions']) ? (e['actions'] as Record<string, Obj>) : {})) {
      const aat = [...at, 'actions', action];
      const notes = s.report.filter((r) => r.startsWith(`${name}.${action} `));
      const req = isObj(a['request']) ? a['request'] : {};
      const operation =
        req['graphql'] !== undefined
          ? `${String(req['method'] ?? 'POST')} ${String(req['path'] ?? '')} (GraphQL)`
          : `${String(req['method'])} ${String(req['path'])}`;
      out.push(`  ${action}:`);
      out.push(line('    ', 'request', operation, [...under(g, aat, [['params'], ['response'], ['pagination']])], "the description's operation"));
      const params = Object.keys(isObj(a['params']) ? a['params'] : {});
      const paramGuesses = under(g, [...aat, 'params']).map((x) =>
        x.path.length > aat.length + 1 ? { ...x, message: `${String(x.path.at(-1))}: ${x.message}` } : x,
      );
      out.push(line('    ', 'params', params.length > 0 ? params.join(', ') : 'none', paramGuesses, "the operation's parameters and body"));
      const res = isObj(a['response']) ? a['response'] : {};
      const where = res['records'] !== undefined ? 'records' : 'record';
      out.push(
        line(
          '    ',
          where,
          show(res[where]),
          under(g, [...aat, 'response']),
          res[where] === '{{body}}' ? 'the response schema is the record' : 'the response schema',
          notes.filter((r) => /records not found|no JSON response schema/.test(r)),
        ),
      );
      if (action === 'list' || a['pagination'] !== undefined) {
        out.push(
          line(
            '    ',
            'pagination',
            a['pagination'] === undefined ? 'none' : show(a['pagination']),
            under(g, [...aat, 'pagination']),
            'the description',
            notes.filter((r) => /pagination/.test(r)),
          ),
        );
      }
      for (const r of notes.filter((n) => !/records not found|no JSON response schema|pagination/.test(n)))
        out.push(`    note: ${r.slice(r.indexOf(': ') + 2)}`);
    }
  }
  const others = s.report.filter((r) => !/^[a-z][a-z0-9_]*\.(list|get|create|update|search) /.test(r) && !r.startsWith('base URL'));
  if (others.length > 0) out.push('', 'Not inferred:', ...others.map((r) => `  - ${r}`));
  return `${out.join('\n')}\n`;
}
