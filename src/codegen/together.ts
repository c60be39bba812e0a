/**
 * Many named schemas through one json-schema-to-typescript compile instead of one compile each.
 * A compile's fixed passes (option merge, clone, dereference, link, validate, normalise, parse,
 * optimise, generate) cost about as much again as the schema itself on the small schemas of a
 * connector; one compile over all of them pays them once.
 *
 * The schemas become the properties of one root object; each keeps its title (its type name), so
 * the library declares each as its own export after the root's. The text is then cut back into
 * one declaration per schema: the same text a compile of each alone gives, as long as every
 * schema is self-contained and declares nothing besides itself. When that does not hold (a
 * `$ref`, definitions, a nested titled schema or enum that would be declared once for all, a
 * name that repeats), each schema is compiled alone, as before.
 */
import type { JSONSchema } from 'json-schema-to-typescript';
import type { SchemaBatch } from './schema-pool.ts';

/** Keywords whose meaning depends on the document a schema sits in: such schemas compile alone. */
const CONTEXT_KEYS = new Set(['$defs', 'definitions']);
/** The same, with a string value (a property named `id` is an object: no keyword). */
const CONTEXT_STRINGS = new Set(['$ref', '$id', 'id', '$schema']);

/** Whether `schema` uses no keyword tied to its document (a property named like one counts too: compiled alone, still right). */
function selfContained(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(selfContained);
  if (schema === null || typeof schema !== 'object') return true;
  for (const [k, v] of Object.entries(schema)) {
    if (CONTEXT_KEYS.has(k) || (typeof v === 'string' && CONTEXT_STRINGS.has(k)) || !selfContained(v)) return false;
  }
  return true;
}

const DECLARATION = /^export (?:declare )?(?:const )?(?:interface|type|enum) ([A-Za-z_$][\w$]*)\b/;

/**
 * The text of each of `names`, cut from one compile's output at its declarations (each with the
 * doc comment above it); undefined when the output declares anything else than `root` and
 * `names`, each once, or a line starting `export ` is no declaration the cut understands.
 */
export function splitDeclarations(text: string, names: string[], root: string): string[] | undefined {
  const lines = text.split('\n');
  const starts: { name: string; at: number }[] = [];
  for (const [i, line] of lines.entries()) {
    if (!line.startsWith('export ')) continue;
    const name = DECLARATION.exec(line)?.[1];
    if (name === undefined) return undefined;
    let at = i;
    // Its doc comment: top-level comments and those of properties alike start at column 0 when
    // the output is not formatted, so the comment is the block that ends on the line above.
    if (lines[i - 1] === ' */') {
      at = i - 1;
      while (at > 0 && lines[at] !== '/**') at--;
    }
    starts.push({ name, at });
  }
  const wanted = new Set([...names, root]);
  if (starts.length !== wanted.size || starts.some((s) => !wanted.has(s.name))) return undefined;
  const byName = new Map<string, string>();
  for (const [k, s] of starts.entries()) {
    if (byName.has(s.name)) return undefined;
    // Ending in one newline, as the text of a compile does.
    byName.set(
      s.name,
      lines
        .slice(s.at, starts[k + 1]?.at ?? lines.length)
        .join('\n')
        .replace(/\n*$/, '\n'),
    );
  }
  return names.map((n) => byName.get(n)!);
}

/** A root type name none of `names` uses. */
function rootName(names: string[]): string {
  const taken = new Set(names);
  let name = 'CodegenRoot';
  for (let i = 1; taken.has(name); i++) name = `CodegenRoot${i}`;
  return name;
}

/**
 * The TypeScript of each schema of `batch`, as `run` (one compile per input) would give it: one
 * compile of them all when they allow it, else one each.
 */
export async function compileTogether(batch: SchemaBatch, run: (batch: SchemaBatch) => Promise<string[]>): Promise<string[]> {
  const { inputs, names, options } = batch;
  const distinct = new Set(names).size === names.length;
  const titled = inputs.every((s, i) => s.title === names[i]);
  if (inputs.length < 2 || !distinct || !titled || !inputs.every(selfContained)) return run(batch);
  const root = rootName(names);
  const properties = Object.fromEntries(names.map((n, i) => [n, inputs[i]!]));
  const document = { title: root, type: 'object', additionalProperties: false, properties } as JSONSchema;
  let text: string | undefined;
  try {
    [text] = await run({ inputs: [document], names: [root], options: { ...options, declareExternallyReferenced: true } });
  } catch {
    // Refused: one by one, for the error of the schema at fault (or their text, if none is).
    return run(batch);
  }
  return splitDeclarations(text!, names, root) ?? run(batch);
}
