/**
 * What `switchboard init` builds, whatever the vendor's description format: a manifest object, the
 * guesses to mark with `# check:` comments at their place in the YAML, and the report of what could
 * not be inferred. `renderScaffold` writes the YAML; `loadManifestText` must accept it unedited.
 */
import { Document, isCollection, isMap, isPair, isScalar, visit, type Node, type Pair } from 'yaml';

/** A guess, shown as `# check: <message>` above (or, for a scalar, beside) the key at `path`. */
export interface Guess {
  path: (string | number)[];
  message: string;
}

export interface Scaffold {
  /** The connector type (connectors/<type>/connector.yaml). */
  type: string;
  manifest: Record<string, unknown>;
  guesses: Guess[];
  /** What init could not infer, one line each: printed, and kept at the top of the manifest. */
  report: string[];
  /** Lines of the header comment (what the manifest was scaffolded from). */
  header: string[];
}

/** A name the manifest format accepts for types, entities and params: `[a-z][a-z0-9_]*`. */
export function safeName(raw: string): string {
  const snake = raw
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  if (snake === '') return 'x';
  return /^[a-z]/.test(snake) ? snake : `p_${snake}`;
}

/** The first sentence (or line) of a vendor's description, short enough for a YAML line. */
export function shortText(text: unknown, max = 160): string | undefined {
  if (typeof text !== 'string') return undefined;
  const plain = text
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    // Markdown emphasis, but not the underscores inside names (meta.after_cursor).
    .replace(/[*`]{1,2}/g, '')
    .replace(/(^|[^A-Za-z0-9])_{1,2}([^_]+?)_{1,2}(?![A-Za-z0-9])/g, '$1$2')
    .trim();
  const first = (plain.split(/\n\s*\n|\n/)[0] ?? '').trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(first)?.[1] ?? first;
  if (sentence === '') return undefined;
  return sentence.length > max ? `${sentence.slice(0, max - 1).trimEnd()}…` : sentence;
}

/** A param schema as the manifest needs it: with a `type` (any JSON value when the description gives none). */
export function withType<T extends Record<string, unknown>>(schema: T): T {
  // A param's `required` is the manifest's boolean: an object param's JSON Schema list of required keys cannot stay at its top.
  const { required, ...rest } = schema;
  const own = (Array.isArray(required) ? rest : schema) as T;
  return own['type'] !== undefined ? own : { ...own, type: ['string', 'number', 'boolean', 'object', 'array'] };
}

/** The pair of `map` whose key is `key`. */
function pairOf(map: unknown, key: string | number): Pair<Node, Node> | undefined {
  if (!isMap(map)) return undefined;
  return (map.items as Pair<Node, Node>[]).find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
}

/** The scaffold as YAML: header and report as comments on top, each guess beside what it is about. */
export function renderScaffold(s: Scaffold): string {
  const doc = new Document(s.manifest);
  for (const g of s.guesses) {
    const parent = doc.getIn(g.path.slice(0, -1), true);
    const pair = pairOf(parent, g.path.at(-1) as string);
    if (pair === undefined) continue;
    const text = ` check: ${g.message}`;
    if (isScalar(pair.value) && !String(pair.value.value).includes('\n')) pair.value.comment = pair.value.comment ? `${pair.value.comment};${text}` : text;
    else if (isScalar(pair.key)) pair.key.commentBefore = pair.key.commentBefore ? `${pair.key.commentBefore}\n${text}` : text;
  }
  // Short collections of scalars on one line, as manifests are written by hand: `{ type: string, secret: true }`.
  visit(doc, {
    Collection(_key, node) {
      const items = node.items as unknown[];
      const leaf = items.every((i) =>
        isPair(i)
          ? isScalar(i.key) &&
            !i.key.commentBefore &&
            (isScalar(i.value) || (isCollection(i.value) && i.value.flow === true)) &&
            !(isScalar(i.value) && i.value.comment)
          : isScalar(i) || (isCollection(i) && i.flow === true),
      );
      if (!leaf || items.length === 0) return;
      const text = JSON.stringify(node.toJSON());
      // Lists of scalars (enums, scopes) always: one line each, however long.
      if ((text.length <= 110 || (!isMap(node) && items.every((i) => isScalar(i)))) && !text.includes('\\n')) node.flow = true;
    },
  });
  const top = [...s.header.map((l) => ` ${l}`)];
  if (s.report.length > 0) {
    top.push('', ' Not inferred (switchboard init could not tell; fill in by hand if you need it):');
    for (const line of s.report) top.push(` - ${line}`);
  }
  top.push('', ' Lines marked "check:" are guesses: confirm them against the vendor\'s documentation.');
  doc.commentBefore = top.join('\n');
  return doc.toString({ lineWidth: 0, flowCollectionPadding: true });
}
