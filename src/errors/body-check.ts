/**
 * The one check of a parsed request body, shared by the service's JSON parser, the Connect UI's
 * form fields and inbound webhooks: by one bounded iterative walk (no recursion: a 20,000-deep
 * body cannot overflow the stack), nesting deeper than MAX_JSON_DEPTH is 400 invalid_json_depth;
 * a lone surrogate (\ud800–\udfff without its pair, which no UTF-8 database stores as sent) or
 * a NUL or other control character in any string or key is 400 invalid_characters. Tab, LF and
 * CR stay allowed inside body strings (free text).
 */
import { SwitchboardError, type ErrorDetail } from './index.ts';

/** Deepest nesting of objects and arrays a request body may have (the root object is level 1). */
export const MAX_JSON_DEPTH = 64;

export const CONTROL_ANY = /[\u0000-\u001f\u007f]/;
const CONTROL_BODY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

const MAX_REPORTED = 20;

function pointerEscape(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Why a string or key is refused, or undefined when it is fine. */
export function badText(s: string, control: RegExp): string | undefined {
  if (!s.isWellFormed()) return 'contains a lone surrogate (\\ud800-\\udfff without its pair): not valid Unicode';
  if (control.test(s)) return 'contains a NUL or control character';
  return undefined;
}

/** The common, clean case: is anything wrong in `root`? Iterative; builds no paths. */
function firstProblem(root: unknown, control: RegExp, maxDepth: number): 'depth' | 'characters' | undefined {
  if (typeof root === 'string') return badText(root, control) === undefined ? undefined : 'characters';
  if (root === null || typeof root !== 'object') return undefined;
  const values: unknown[] = [root];
  const depths: number[] = [1];
  let characters = false;
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > maxDepth) return 'depth';
    if (Array.isArray(v)) {
      for (const x of v) {
        if (typeof x === 'string') {
          if (!characters && badText(x, control) !== undefined) characters = true;
        } else if (x !== null && typeof x === 'object') {
          values.push(x);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      if (!characters && badText(k, control) !== undefined) characters = true;
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === 'string') {
        if (!characters && badText(x, control) !== undefined) characters = true;
      } else if (x !== null && typeof x === 'object') {
        values.push(x);
        depths.push(depth + 1);
      }
    }
  }
  return characters ? 'characters' : undefined;
}

/**
 * Paths (JSON pointers) of strings or keys in `root` that are refused, with why; at most 20.
 * Iterative and bounded by `maxDepth` (deeper levels are not visited).
 */
export function findBadCharacters(root: unknown, control: RegExp, maxDepth = MAX_JSON_DEPTH): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }];
  while (stack.length > 0 && out.length < MAX_REPORTED) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === 'string') {
      const why = badText(value, control);
      if (why !== undefined) out.push({ path: path === '' ? '/' : path, message: why });
      continue;
    }
    if (value === null || typeof value !== 'object' || depth >= maxDepth) continue;
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    // Pushed in reverse, so paths are reported in document order.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i] as readonly [string, unknown];
      stack.push({ value: v, path: `${path}/${pointerEscape(k)}`, depth: depth + 1 });
    }
    if (!Array.isArray(value)) {
      for (const k of Object.keys(value)) {
        const why = badText(k, control);
        if (why !== undefined && out.length < MAX_REPORTED) out.push({ path: `${path}/${pointerEscape(k)}`, message: `the key ${why}` });
      }
    }
  }
  return out;
}

export function charactersError(errors: ErrorDetail[]): SwitchboardError {
  return new SwitchboardError(
    'invalid_characters',
    `The request contains NUL or control characters, or invalid Unicode (a lone surrogate): ${errors.map((e) => e.path).join(', ')}`,
    { errors },
  );
}

/**
 * The one check of a parsed request body (JSON, or the Connect UI's form fields): undefined when
 * it is fine, else the 400 to answer (invalid_json_depth before invalid_characters).
 */
export function checkBody(value: unknown): SwitchboardError | undefined {
  const found = firstProblem(value, CONTROL_BODY, MAX_JSON_DEPTH);
  if (found === undefined) return undefined;
  if (found === 'depth') {
    return new SwitchboardError('invalid_json_depth', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep`, {
      details: { max_depth: MAX_JSON_DEPTH },
    });
  }
  return charactersError(findBadCharacters(value, CONTROL_BODY));
}
