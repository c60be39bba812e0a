/**
 * The manifest template language: Handlebars with `noEscape`, a closed set of helpers, compiled
 * once at manifest load time.
 *
 * - A template that is exactly one expression (`"{{params.per_page}}"`, `"{{add body.page 1}}"`)
 *   evaluates to the raw typed value: numbers stay numbers, objects stay objects, a missing
 *   value is `undefined` (and the caller drops the key).
 * - Any other template renders to a string through Handlebars.
 * - Variables are checked at load time (see `references`), never discovered at request time.
 */
import Handlebars from 'handlebars';

/** A value a template can see: params, credentials, config, body, headers, record... */
export type TemplateContext = Record<string, unknown>;

type Helper = (...args: unknown[]) => unknown;

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}

/** A number, or a numeric string as one; undefined for anything else. */
function toNumber(v: unknown): number | undefined {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** The closed helper set. Every helper is pure and total (never throws on odd input). */
const HELPERS: Record<string, Helper> = {
  /** JSON-encode a value (strings are quoted). */
  json: (v) => JSON.stringify(v ?? null),
  /** First argument that is not undefined, null or ''. */
  default: (...args) => args.find((a) => !isEmpty(a)),
  /** Join an array with a separator (default ","). */
  join: (arr, sep) => (Array.isArray(arr) ? arr.map(String).join(typeof sep === 'string' ? sep : ',') : arr),
  eq: (a, b) => a === b,
  ne: (a, b) => a !== b,
  lt: (a, b) => typeof a === 'number' && typeof b === 'number' && a < b,
  gt: (a, b) => typeof a === 'number' && typeof b === 'number' && a > b,
  and: (...args) => args.every(Boolean),
  or: (...args) => args.find(Boolean) ?? args[args.length - 1],
  not: (a) => !a,
  /** Numeric addition; undefined when either side is not a number. */
  add: (a, b) => {
    const x = typeof a === 'string' && a.trim() !== '' ? Number(a) : a;
    const y = typeof b === 'string' && b.trim() !== '' ? Number(b) : b;
    return typeof x === 'number' && typeof y === 'number' && Number.isFinite(x + y) ? x + y : undefined;
  },
  /** Numeric subtraction; undefined when either side is not a number. */
  sub: (a, b) => {
    const [x, y] = [toNumber(a), toNumber(b)];
    return x !== undefined && y !== undefined && Number.isFinite(x - y) ? x - y : undefined;
  },
  /** Numeric division (a wait from a cost deficit and a restore rate); undefined when either side is not a number or the divisor is 0. */
  div: (a, b) => {
    const [x, y] = [toNumber(a), toNumber(b)];
    return x !== undefined && y !== undefined && y !== 0 && Number.isFinite(x / y) ? x / y : undefined;
  },
  /** Number from a numeric string; undefined otherwise. */
  number: (a) => {
    if (typeof a === 'number') return a;
    if (typeof a === 'string' && /^-?\d+(\.\d+)?$/.test(a)) return Number(a);
    return undefined;
  },
  /** String form of a scalar; undefined stays undefined. */
  string: (a) => (a === undefined || a === null ? a : typeof a === 'object' ? JSON.stringify(a) : String(a)),
  /** Opaque cursor: base64url of the JSON of a value. */
  cursor_encode: (v) => (v === undefined || v === null ? v : Buffer.from(JSON.stringify(v)).toString('base64url')),
  /** Inverse of cursor_encode; undefined for anything that is not such a cursor. */
  cursor_decode: (v) => {
    if (typeof v !== 'string' || v === '') return undefined;
    try {
      return JSON.parse(Buffer.from(v, 'base64url').toString('utf8')) as unknown;
    } catch {
      // A cursor we did not make: the caller sees it as absent and starts from the beginning.
      return undefined;
    }
  },
  /** A copy of an object without the named keys. */
  omit: (obj, ...keys) => {
    if (obj === null || typeof obj !== 'object') return obj;
    const drop = new Set(keys.filter((k): k is string => typeof k === 'string'));
    return Object.fromEntries(Object.entries(obj).filter(([k]) => !drop.has(k)));
  },
  /** A copy of an object with only the named keys (undefined when none are present). */
  pick: (obj, ...keys) => {
    if (obj === null || typeof obj !== 'object') return undefined;
    const keep = new Set(keys.filter((k): k is string => typeof k === 'string'));
    const out = Object.fromEntries(Object.entries(obj).filter(([k]) => keep.has(k)));
    return Object.keys(out).length > 0 ? out : undefined;
  },
  /** `value` when `condition` is set (not undefined, null, '', [] or false), else undefined: an optional object or array. */
  when: (condition, value) => (!isEmpty(condition) && condition !== false ? value : undefined),
  /** A JSON string parsed (undefined when it is not valid JSON); other values pass through. */
  parse_json: (v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return undefined;
    }
  },
  /** The value at a key path of an object: get obj 'a' 'b' is obj.a.b (undefined when absent). */
  get: (obj, ...keys) => {
    let cur: unknown = obj;
    for (const k of keys) {
      if (cur === null || typeof cur !== 'object' || (typeof k !== 'string' && typeof k !== 'number') || !Object.prototype.hasOwnProperty.call(cur, k))
        return undefined;
      cur = (cur as Record<string, unknown>)[k];
    }
    return cur;
  },
  /** The first element of an array. */
  first: (arr) => (Array.isArray(arr) ? arr[0] : undefined),
  /** The last element of an array (Stripe's starting_after is the last record's id). */
  last: (arr) => (Array.isArray(arr) ? arr[arr.length - 1] : undefined),
  /** An object's entries as [{key, value}] (Jira's errors: {field: message}, for errors.list); undefined for anything else. */
  entries: (obj) => (obj !== null && typeof obj === 'object' && !Array.isArray(obj) ? Object.entries(obj).map(([key, value]) => ({ key, value })) : undefined),
  /** A string split at a separator (default ","); undefined for anything that is not a string. */
  split: (s, sep) => (typeof s === 'string' ? s.split(typeof sep === 'string' && sep !== '' ? sep : ',') : undefined),
  /** The host of an absolute URL, lower case (`https://acme.example.com/x` → `acme.example.com`); undefined for anything else. */
  url_host: (s) => {
    if (typeof s !== 'string' || !/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return undefined;
    try {
      return new URL(s).hostname || undefined;
    } catch {
      return undefined;
    }
  },
  /** Map an array of objects to one field. */
  pluck: (arr, key) => (Array.isArray(arr) && typeof key === 'string' ? arr.map((x) => (x as Record<string, unknown> | null)?.[key]) : undefined),
  /**
   * A list, one level flat: an array's items, each array item's items in its place, null and
   * undefined items dropped; [] for null or undefined (a list the upstream leaves out when empty:
   * `flatten body.messages`), [v] for any other value (`flatten (pluck body.history 'messages')`).
   */
  flatten: (v) =>
    v === undefined || v === null
      ? []
      : Array.isArray(v)
        ? v.flatMap((x) => (x === undefined || x === null ? [] : Array.isArray(x) ? (x as unknown[]) : [x]))
        : [v],
  /** `k=v` pairs of a text as an object ("t=1492774577,v1=5257a8…" with ',' and '='): a signature header of several parts. */
  pairs: (s, sep, kvSep) => {
    if (typeof s !== 'string') return undefined;
    const out: Record<string, string> = {};
    for (const part of s.split(typeof sep === 'string' ? sep : ',')) {
      const at = part.indexOf(typeof kvSep === 'string' ? kvSep : '=');
      if (at > 0) out[part.slice(0, at).trim()] ??= part.slice(at + 1).trim();
    }
    return out;
  },
  /** The items of an array whose field `key` is not `value` (a change feed's entries less its deletions: `reject body.entries '.tag' 'deleted'`). */
  reject: (arr, key, value) =>
    Array.isArray(arr) && typeof key === 'string' ? arr.filter((x) => (x as Record<string, unknown> | null)?.[key] !== value) : undefined,
  /** The first object of an array whose field `key` equals `value` (the default of several accounts: `find body.accounts 'is_default' true`). */
  find: (arr, key, value) =>
    Array.isArray(arr) && typeof key === 'string' ? arr.find((x) => (x as Record<string, unknown> | null)?.[key] === value) : undefined,
  /** The arrays given, one after the other (arguments that are not arrays are left out). */
  concat: (...args) => args.filter(Array.isArray).flat(1),
  /**
   * Objects merged key by key, left to right, a later one winning (a record's typed fields and its
   * custom ones; a record's fields beside its id and version); non-objects skipped, undefined values
   * dropped, undefined when no argument is an object.
   */
  merge: (...args) => {
    const objects = args.filter((a): a is Record<string, unknown> => a !== null && typeof a === 'object' && !Array.isArray(a));
    if (objects.length === 0) return undefined;
    const out: Record<string, unknown> = {};
    for (const o of objects) for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v;
    return out;
  },
  /** An object from alternating key/value arguments, dropping undefined values. */
  object: (...args) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i + 1 < args.length; i += 2) if (args[i + 1] !== undefined) out[String(args[i])] = args[i + 1];
    return out;
  },
  /** An array of the arguments, dropping undefined. */
  array: (...args) => args.filter((a) => a !== undefined),
  /** Current Unix time in seconds (for token expiry). */
  now_unix: () => Math.floor(Date.now() / 1000),
  /** The current time as ISO 8601 UTC (the end of a time window a request must name). */
  now_iso: () => new Date().toISOString(),
};

/** Names of the helpers templates may call. */
export const HELPER_NAMES: readonly string[] = Object.keys(HELPERS);

/**
 * A helper's object or array result inside a rendered string: printed as JSON, but handed to an
 * enclosing helper or block as the value itself (`{{#each (entries body.errors)}}`,
 * `{{#if x}}{{get (last body) 'id'}}{{/if}}`), not as its JSON text.
 */
class Printed {
  constructor(readonly value: object) {}
  toString(): string {
    return JSON.stringify(this.value);
  }
}
const unwrap = (v: unknown): unknown => (v instanceof Printed ? v.value : v);

const hb = Handlebars.create();
for (const [name, fn] of Object.entries(HELPERS)) {
  // Handlebars passes an options object last; drop it so helpers see only their arguments.
  hb.registerHelper(name, (...args: unknown[]) => {
    const v = fn(...args.slice(0, -1).map(unwrap));
    return v !== null && typeof v === 'object' ? new Printed(v) : v;
  });
}
// The blocks see a helper's value too (an empty list is falsy, a list is iterated).
for (const name of ['if', 'unless', 'each', 'with']) {
  const builtin = hb.helpers[name] as (this: unknown, ...args: unknown[]) => unknown;
  hb.registerHelper(name, function (this: unknown, ...args: unknown[]) {
    return builtin.call(this, ...args.map(unwrap));
  });
}
const KNOWN_HELPERS = Object.fromEntries([...HELPER_NAMES, 'if', 'unless', 'each', 'with', 'lookup'].map((n) => [n, true]));

/** A reference a template makes to its context, e.g. `["params", "per_page"]`. */
export type Reference = string[];

/** A compiled template. */
export interface Template {
  readonly source: string;
  /** Root-anchored variable references (block-local `this` references are excluded). */
  readonly references: Reference[];
  /** True when the template is exactly one expression (its value keeps its JSON type). */
  readonly single: boolean;
  /** Evaluate: the typed value for a single expression, else the rendered string. */
  render(ctx: TemplateContext): unknown;
  /** Render for a URL path: every expression's value is URL-encoded as one path segment. */
  renderPath(ctx: TemplateContext): string;
}

/** Thrown by compileTemplate for syntax errors and unknown helpers. */
export class TemplateSyntaxError extends Error {}

/** Thrown by renderPath when a value would be an empty, "." or ".." path segment. */
export class PathValueError extends Error {
  readonly variable: string;
  constructor(expr: hbs.AST.Expression, value: string) {
    const variable = expr.type === 'PathExpression' ? (expr as hbs.AST.PathExpression).original : 'expression';
    super(`${variable} may not be ${value === '' ? 'empty' : `"${value}"`} in a URL path`);
    this.variable = variable;
  }
}

function lookup(ctx: unknown, parts: string[]): unknown {
  let cur: unknown = ctx;
  for (const p of parts) {
    if (cur === null || cur === undefined || typeof cur !== 'object') return undefined;
    if (!Object.prototype.hasOwnProperty.call(cur, p)) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function evalExpr(node: hbs.AST.Expression, ctx: TemplateContext): unknown {
  switch (node.type) {
    case 'PathExpression': {
      const p = node as hbs.AST.PathExpression;
      return lookup(ctx, p.parts);
    }
    case 'SubExpression': {
      const s = node as hbs.AST.SubExpression;
      return callHelper(s.path as hbs.AST.PathExpression, s.params, ctx);
    }
    case 'StringLiteral':
      return (node as hbs.AST.StringLiteral).value;
    case 'NumberLiteral':
      return (node as hbs.AST.NumberLiteral).value;
    case 'BooleanLiteral':
      return (node as hbs.AST.BooleanLiteral).value;
    case 'NullLiteral':
      return null;
    default:
      return undefined;
  }
}

function callHelper(path: hbs.AST.PathExpression, params: hbs.AST.Expression[], ctx: TemplateContext): unknown {
  const fn = HELPERS[path.original];
  if (fn === undefined) throw new TemplateSyntaxError(`unknown helper "${path.original}"`);
  return fn(...params.map((p) => evalExpr(p, ctx)));
}

function evalMustache(m: hbs.AST.MustacheStatement, ctx: TemplateContext): unknown {
  const path = m.path;
  if (path.type === 'PathExpression' && (m.params.length > 0 || HELPERS[(path as hbs.AST.PathExpression).original] !== undefined)) {
    return callHelper(path as hbs.AST.PathExpression, m.params, ctx);
  }
  return evalExpr(path, ctx);
}

/** Collect variable references; paths inside block bodies that are relative to `this` are skipped. */
function collect(node: hbs.AST.Node, out: Reference[], helperNames: Set<string>, depth: number): void {
  const visitExpr = (e: hbs.AST.Expression | undefined, isCallee = false): void => {
    if (e === undefined) return;
    if (e.type === 'PathExpression') {
      const p = e as hbs.AST.PathExpression;
      if (isCallee) {
        if (!KNOWN_HELPERS[p.original])
          throw new TemplateSyntaxError(`unknown helper "${p.original}" (known: ${HELPER_NAMES.join(', ')}, if, unless, each, with)`);
        return;
      }
      if (p.data || p.original === 'this' || p.original.startsWith('this.') || p.original.startsWith('../')) return;
      if (depth > 0 && p.parts.length <= 1) return; // block-local (e.g. a field inside #each)
      out.push([...p.parts]);
    } else if (e.type === 'SubExpression') {
      const s = e as hbs.AST.SubExpression;
      visitExpr(s.path, true);
      s.params.forEach((x) => visitExpr(x));
    }
  };
  switch (node.type) {
    case 'Program':
      (node as hbs.AST.Program).body.forEach((s) => collect(s, out, helperNames, depth));
      break;
    case 'MustacheStatement': {
      const m = node as hbs.AST.MustacheStatement;
      const callee = m.params.length > 0 || (m.path.type === 'PathExpression' && KNOWN_HELPERS[(m.path as hbs.AST.PathExpression).original] === true);
      visitExpr(m.path, callee);
      m.params.forEach((x) => visitExpr(x));
      break;
    }
    case 'BlockStatement': {
      const b = node as hbs.AST.BlockStatement;
      visitExpr(b.path, true);
      b.params.forEach((x) => visitExpr(x));
      const inner = (b.path as hbs.AST.PathExpression).original === 'each' || (b.path as hbs.AST.PathExpression).original === 'with' ? depth + 1 : depth;
      if (b.program) collect(b.program, out, helperNames, inner);
      if (b.inverse) collect(b.inverse, out, helperNames, depth);
      break;
    }
    case 'PartialStatement':
    case 'PartialBlockStatement':
    case 'DecoratorBlock':
    case 'Decorator':
      throw new TemplateSyntaxError('partials and decorators are not part of the template language');
    default:
      break;
  }
}

/** The parts of a mustache that is a plain context path (no helper, params, data or `this`), else undefined. */
function plainPath(st: hbs.AST.Statement): string[] | undefined {
  if (st.type !== 'MustacheStatement') return undefined;
  const m = st as hbs.AST.MustacheStatement;
  if (m.params.length > 0 || (m.hash !== undefined && m.hash.pairs.length > 0) || m.path.type !== 'PathExpression') return undefined;
  const p = m.path as hbs.AST.PathExpression;
  if (p.data || p.depth !== 0 || p.parts.length === 0 || p.original.startsWith('this') || KNOWN_HELPERS[p.original] === true) return undefined;
  return [...p.parts];
}

/** Handlebars' own path lookup: stops at null or undefined; own properties only (primitives included, as its lookupProperty does). */
function handlebarsLookup(ctx: unknown, parts: string[]): unknown {
  let cur: unknown = ctx;
  for (const p of parts) {
    if (cur === null || cur === undefined) return cur;
    const next = (cur as Record<string, unknown>)[p];
    if (next === null || next === undefined) return next;
    if (!Object.prototype.hasOwnProperty.call(cur, p)) return undefined;
    // Handlebars calls a function it finds in the context: leave that to it.
    if (typeof next === 'function') return FALLBACK;
    cur = next;
  }
  return cur;
}

const FALLBACK = Symbol('render through Handlebars');

/**
 * Compile a template once. Throws TemplateSyntaxError for a syntax error or an unknown helper;
 * the manifest loader turns that into a located manifest problem.
 */
export function compileTemplate(source: string): Template {
  let ast: hbs.AST.Program;
  try {
    ast = Handlebars.parse(source);
  } catch (e) {
    throw new TemplateSyntaxError((e as Error).message.split('\n')[0] ?? 'syntax error');
  }
  const references: Reference[] = [];
  collect(ast, references, new Set(HELPER_NAMES), 0);
  const only = ast.body.length === 1 ? ast.body[0] : undefined;
  const single = only !== undefined && only.type === 'MustacheStatement';
  const hasExpr = ast.body.some((s) => s.type !== 'ContentStatement');
  const pathOnly = ast.body.every((s) => s.type === 'ContentStatement' || s.type === 'MustacheStatement');
  // Text and plain paths only (`Bearer {{credentials.api_key}}`): rendered by concatenation,
  // as Handlebars would render them, without its runtime.
  const pieces = ast.body.every((st) => st.type === 'ContentStatement' || plainPath(st) !== undefined)
    ? ast.body.map((st) => (st.type === 'ContentStatement' ? (st as hbs.AST.ContentStatement).value : plainPath(st)!))
    : undefined;
  let compiled: HandlebarsTemplateDelegate | undefined;
  const stringRender = (ctx: TemplateContext): string => {
    if (pieces !== undefined) {
      // Handlebars compiles these to one `return p1 + p2 + ...` (a missing value is ""), so
      // JavaScript's + decides, numbers adding up included; the result is then a string.
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      let acc: any;
      let fast = true;
      for (let i = 0; i < pieces.length; i++) {
        const piece = pieces[i]!;
        let v: unknown = piece;
        if (typeof piece !== 'string') {
          v = handlebarsLookup(ctx, piece);
          if (v === FALLBACK) {
            fast = false;
            break;
          }
          if (v === null || v === undefined) v = '';
        }
        acc = i === 0 ? v : acc + (v as string);
      }
      if (fast) return String(acc);
    }
    compiled ??= hb.compile(ast, { noEscape: true, knownHelpers: KNOWN_HELPERS, knownHelpersOnly: true });
    return compiled(ctx);
  };
  // A single plain path (`{{params.per_page}}`, not a helper's name) is a direct lookup.
  const onlyPath =
    single &&
    (only as hbs.AST.MustacheStatement).path.type === 'PathExpression' &&
    (only as hbs.AST.MustacheStatement).params.length === 0 &&
    HELPERS[((only as hbs.AST.MustacheStatement).path as hbs.AST.PathExpression).original] === undefined
      ? ((only as hbs.AST.MustacheStatement).path as hbs.AST.PathExpression).parts
      : undefined;
  return {
    source,
    references,
    single,
    render(ctx) {
      if (!hasExpr) return source;
      if (onlyPath !== undefined) return lookup(ctx, onlyPath);
      if (single) return evalMustache(only as hbs.AST.MustacheStatement, ctx);
      return stringRender(ctx);
    },
    renderPath(ctx) {
      if (!pathOnly) throw new TemplateSyntaxError('path templates may not contain blocks');
      let out = '';
      for (const s of ast.body) {
        if (s.type === 'ContentStatement') {
          out += (s as hbs.AST.ContentStatement).value;
          continue;
        }
        const v = evalMustache(s as hbs.AST.MustacheStatement, ctx);
        const text = v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
        // An empty, "." or ".." segment would change which resource the URL names.
        if (text === '' || text === '.' || text === '..') throw new PathValueError((s as hbs.AST.MustacheStatement).path, text);
        // One segment: everything encoded but the comma, which a segment may hold as is (RFC 3986
        // sub-delims) and which ids made of parts are written with (a SharePoint site's host,site,web).
        out += encodeURIComponent(text).replace(/%2C/g, ',');
      }
      return out;
    },
  };
}

/** Evaluate a helper by name (used by code that needs the same semantics outside templates). */
export function truthy(v: unknown): boolean {
  return !isEmpty(v) && v !== false && v !== 0;
}
