/**
 * Shared manifest parts: a manifest's top-level `extends` names partial manifests (YAML files of
 * top-level sections: auth, headers, retry, rate_limit, errors, base_url, webhooks...) that several
 * connectors of one vendor have in common. The loader reads them and deep-merges them under the
 * manifest before schema validation and the semantic checks:
 *
 * - paths are relative to the file naming them, and must stay inside the connectors directory
 *   (the folder holding the manifest's own folder), symbolic links resolved;
 * - a list is applied in order (a later part wins over an earlier one), each part's own
 *   `extends` under it; the manifest wins over all of them;
 * - objects are merged key by key; the `auth` list is merged by variant `name` (a variant of
 *   the manifest naming a shared one is merged into it, others appended); other arrays and
 *   scalars are replaced;
 * - a missing or unreadable file, a YAML error, a part that is not a mapping or that sets `type`
 *   or `vendor_description`, and a cycle are problems reported like any other.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { Checker, type ManifestProblem } from './checks/index.ts';
import { parseYaml, type Located } from './yaml-source.ts';

/** One parsed file of a manifest: the manifest itself or a part it extends, with positions for problems. */
export interface ManifestLayer {
  file: string;
  located(): Located;
}

/** Keys a partial manifest may not set: they belong to one connector. */
const OWN_KEYS = ['type', 'vendor_description'] as const;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` merged onto `base`: objects key by key, lists under `auth` by `name`, anything else replaced by `over`. */
export function mergeManifestParts(base: unknown, over: unknown, path: readonly string[] = []): unknown {
  if (isObject(base) && isObject(over)) {
    const out: Obj = { ...base };
    for (const [k, v] of Object.entries(over)) out[k] = k in base ? mergeManifestParts(base[k], v, [...path, k]) : v;
    return out;
  }
  if (path.length === 1 && path[0] === 'auth' && Array.isArray(base) && Array.isArray(over) && [...base, ...over].every(named)) {
    const out = [...base] as Obj[];
    for (const v of over as Obj[]) {
      const i = out.findIndex((b) => b['name'] === v['name']);
      if (i >= 0) out[i] = mergeManifestParts(out[i], v, [...path, String(i)]) as Obj;
      else out.push(v);
    }
    return out;
  }
  return over;
}

const named = (v: unknown): boolean => isObject(v) && typeof v['name'] === 'string';

interface Resolver {
  /** The connectors directory (real path): every part must lie inside it. */
  root: string;
  problems: ManifestProblem[];
  /** Every part read, in precedence order (the nearest, winning one first). */
  layers: ManifestLayer[];
}

/** The paths `extends` names, or undefined after reporting a malformed value. */
function extendsList(value: unknown, check: Checker): string[] | undefined {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((p) => typeof p === 'string' && p.trim() !== '')) {
    check.add(['extends'], 'must be a path (relative to this file) or a non-empty list of them');
    return undefined;
  }
  return list as string[];
}

/** Read one part, or report why not. */
function readPart(target: string, from: Checker, at: (string | number)[], r: Resolver): { raw: Obj; layer: ManifestLayer } | undefined {
  let text: string;
  try {
    text = readFileSync(target, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    from.add(at, code === 'ENOENT' ? `no file ${target}` : `cannot read ${target}: ${(e as Error).message}`);
    return undefined;
  }
  const parsed = parseYaml(text);
  if ('errors' in parsed) {
    for (const err of parsed.errors)
      r.problems.push({
        file: target,
        location: '',
        ...(err.line !== undefined ? { line: err.line, column: err.column! } : {}),
        message: `YAML error: ${err.message}`,
      });
    return undefined;
  }
  const raw = parsed.source.value;
  const layer: ManifestLayer = { file: target, located: parsed.source.located };
  const check = new Checker(target, layer);
  if (!isObject(raw)) check.add([], 'a partial manifest must be a mapping of top-level sections');
  else for (const k of OWN_KEYS) if (k in raw) check.add([k], `a partial manifest may not set "${k}": it belongs to each connector's own manifest`);
  r.problems.push(...check.problems);
  return check.problems.length === 0 ? { raw: raw as Obj, layer } : undefined;
}

/**
 * `raw` with the parts its `extends` names merged under it (and `extends` removed). `chain` is
 * the real paths of the files being resolved, for cycles; `check` reports on the file `raw` is from.
 */
function resolveParts(raw: Obj, file: string, check: Checker, chain: string[], r: Resolver): Obj {
  const { extends: ext, ...own } = raw;
  if (ext === undefined) return own;
  const list = extendsList(ext, check);
  if (list === undefined) return own;
  let base: unknown = {};
  const parts: ManifestLayer[][] = [];
  list.forEach((p, i) => {
    const at = typeof ext === 'string' ? ['extends'] : ['extends', i];
    if (isAbsolute(p)) return check.add(at, `"${p}" must be a path relative to this file`);
    const target = resolve(dirname(file), p);
    let real: string;
    try {
      real = realpathSync(target);
    } catch {
      return check.add(at, `no file ${target}`);
    }
    const rel = relative(r.root, real);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return check.add(at, `"${p}" is outside the connectors directory ${r.root}`);
    if (chain.includes(real)) return check.add(at, `"${p}" is a cycle: ${[...chain, real].map((f) => relative(r.root, f)).join(' → ')}`);
    const part = readPart(target, check, at, r);
    if (part === undefined) return;
    const sub = new Checker(target, part.layer);
    const before = r.layers.length;
    const merged = resolveParts(part.raw, target, sub, [...chain, real], r);
    r.problems.push(...sub.problems);
    // This part, then the parts under it, ahead of the earlier (losing) entries of the list.
    parts.unshift([part.layer, ...r.layers.splice(before)]);
    base = mergeManifestParts(base, merged);
  });
  r.layers.push(...parts.flat());
  return mergeManifestParts(base, own) as Obj;
}

/**
 * The manifest `raw` (parsed from `file`) with the parts it extends merged under it. Problems go
 * to `check` (the manifest's) and `problems` (any file's); `layers` are the parts read, nearest
 * first, for placing later problems on the file and line a value came from.
 */
export function applyExtends(raw: unknown, file: string, check: Checker): { raw: unknown; layers: ManifestLayer[]; problems: ManifestProblem[] } {
  if (!isObject(raw) || !('extends' in raw)) return { raw, layers: [], problems: [] };
  const abs = resolve(file);
  let self: string;
  try {
    self = realpathSync(abs);
  } catch {
    self = abs;
  }
  let root = dirname(dirname(abs));
  try {
    root = realpathSync(root);
  } catch {
    // a manifest given as text for a file that does not exist: its parts are missing too.
  }
  const r: Resolver = { root, problems: [], layers: [] };
  const merged = resolveParts(raw, abs, check, [self], r);
  return { raw: merged, layers: r.layers, problems: r.problems };
}
