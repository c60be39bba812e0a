/**
 * Manifest YAML, parsed for the loader. The value comes from js-yaml (YAML 1.2 core schema, as
 * `yaml` parses it, about three times faster); the `yaml` document, which places a problem at its
 * line and column, is parsed only when a problem needs it. Text js-yaml refuses, or whose aliases
 * expand past a bound, takes the `yaml` path: its errors (syntax, duplicate keys, excessive
 * aliases) are the ones reported.
 */
import { CORE_SCHEMA, load } from 'js-yaml';
import { LineCounter, parseDocument, type Document } from 'yaml';

/** A YAML document with its line counter (for problem locations). */
export interface Located {
  doc: Document;
  lines: LineCounter;
}

/** A parsed file: its value, and its document when a location is wanted. */
export interface YamlSource {
  value: unknown;
  located(): Located;
}

/** A YAML error: its message and where. */
export interface YamlError {
  message: string;
  duplicateKey: boolean;
  line?: number;
  column?: number;
}

/** Nodes an alias-expanded value may hold before the text takes the `yaml` path (whose alias bound then applies). */
const MAX_EXPANDED_NODES = 200_000;

function locate(text: string): Located {
  const lines = new LineCounter();
  return { doc: parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: true }), lines };
}

/** Count of nodes in `value` as a tree (aliases expanded), stopping past `limit`. */
function expandedSize(value: unknown, limit: number): number {
  let n = 0;
  const stack = [value];
  while (stack.length > 0 && n <= limit) {
    const v = stack.pop();
    n++;
    if (Array.isArray(v)) stack.push(...(v as unknown[]));
    else if (v !== null && typeof v === 'object') stack.push(...Object.values(v));
  }
  return n;
}

/** Parse `text`: its value and lazily its document, or its errors. */
export function parseYaml(text: string): { source: YamlSource } | { errors: YamlError[] } {
  let value: unknown;
  let fast: boolean;
  try {
    value = load(text, { schema: CORE_SCHEMA });
    fast = expandedSize(value, MAX_EXPANDED_NODES) <= MAX_EXPANDED_NODES;
  } catch {
    fast = false;
  }
  if (fast) {
    let located: Located | undefined;
    return { source: { value, located: () => (located ??= locate(text)) } };
  }
  const at = locate(text);
  if (at.doc.errors.length > 0)
    return {
      errors: at.doc.errors.map((err) => {
        const pos = err.linePos?.[0];
        return { message: err.message.split('\n')[0]!, duplicateKey: err.code === 'DUPLICATE_KEY', ...(pos ? { line: pos.line, column: pos.col } : {}) };
      }),
    };
  try {
    value = at.doc.toJS({ maxAliasCount: 1000 });
  } catch (e) {
    return { errors: [{ message: (e as Error).message, duplicateKey: false }] };
  }
  return { source: { value, located: () => at } };
}
