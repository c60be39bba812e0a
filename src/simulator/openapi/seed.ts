/**
 * Seeding the OpenAPI front end's store: records sampled from each resource's schema (or the
 * sidecar's template and seed), ids from a PRNG per (seed, resource), fields drawn from the
 * sidecar's pools. Resources with a parent are seeded after it, each record under one of its
 * records in turn.
 */
import { getPath, idAt, setPath } from '../core/values.ts';
import { seedRandom } from '../core/store.ts';
import type { Json } from '../description.ts';
import { parentLinks, parentParams, type ParentLink } from '../parent-links.ts';
import { fill } from '../rules.ts';
import { seedCount, seedOf } from '../sidecar.ts';
import { newId } from './ids.ts';
import { pathShapes } from './path-shape.ts';
import type { RecordRules } from './records.ts';
import type { OpenApiContext, Resource } from './types.ts';

export interface NestedLinks {
  /** Nested collections (/repos/{owner}/{repo}/issues) by operation: their parent resource and how the path names it (parent-links.ts). */
  links: Map<string, ParentLink>;
  /** Whether the parent a nested path names exists (by id directly, else by the parent's key fields). */
  parentExists(link: ParentLink, pathParams: Record<string, string>): boolean;
}

/** The parents of nested collections; the store is seeded along them (seedStore). */
export function nestedLinks(ctx: OpenApiContext, rules: RecordRules): NestedLinks & { linkOf: Map<string, ParentLink> } {
  const { d, classified, resources, sidecar } = ctx;
  const { find } = rules;
  // Paths by their shape (no .json suffix, no #fragment), as the resources were found.
  const shape = pathShapes(d.operations.map((o) => o.path));
  const operations = d.operations.map((o) => ({ key: o.key, method: o.method, path: shape(o.path) }));
  const links = parentLinks(
    operations,
    classified,
    (n) => resources.get(n)?.idField,
    (n) => sidecar.resources?.[n]?.key,
  );
  /** A resource's seeded records go under the parent of its first nested list or create. */
  const linkOf = new Map<string, ParentLink>();
  for (const [key, link] of links) {
    const name = classified.get(key)?.resource;
    if (name !== undefined && !linkOf.has(name)) linkOf.set(name, link);
  }
  /** Resources a caller can create records of. */
  const creatable = new Set([...classified.values()].filter((c) => c.kind === 'create' && c.resource !== undefined).map((c) => c.resource));
  /**
   * Whether the parent a nested path names exists (by id directly, else by the parent's key fields).
   * A parent no caller can make and none was seeded of (the account the credentials stand for, in
   * the base URL: /Accounts/{AccountSid}/Messages with records: 0) is taken to exist: else nothing
   * under it could ever be listed or created.
   */
  const parentExists = (link: ParentLink, pathParams: Record<string, string>): boolean => {
    const q = resources.get(link.resource);
    if (q === undefined) return false;
    if (q.records.size === 0 && !creatable.has(q.name)) return true;
    const entries = Object.entries(link.fields);
    // By id, or by a lookup field (e.g. issue key ENG-3 for issue 10003).
    if (entries.length === 1 && entries[0]?.[1] === q.idField) return find(q, pathParams[entries[0][0]] ?? '') !== undefined;
    for (const s of q.records.values()) {
      const named = parentParams(link, s.record, getPath, s.parents);
      if (named !== undefined && entries.every(([p]) => named[p] === pathParams[p])) return true;
    }
    return false;
  };
  return { links, linkOf, parentExists };
}

/** Put the caller's records in place and seed every other resource. */
export function seedStore(ctx: OpenApiContext, rules: RecordRules, linkOf: Map<string, ParentLink>): void {
  const { resources, options, sidecar, peek, seed } = ctx;
  const { newRecord, uniqueLookups } = rules;
  /** Whether a seeded text field holds what several records would share: the schema's example, or an example of the description that repeats. */
  const repeats = (r: Resource, k: string, v: unknown, count: number): boolean =>
    v === ((peek(r.recordRef) ?? {}) as Json)[k] || (r.examples !== undefined && r.examples.length < count && r.examples.some((e) => e[k] === v));
  // Parents first, and their parents before them (a project's issues before the issues' notes).
  const depth = (name: string, seen: string[] = []): number => {
    const r = resources.get(name);
    const parent = r?.declared?.parent?.resource ?? linkOf.get(name)?.resource;
    return parent === undefined || seen.includes(name) ? 0 : 1 + depth(parent, [...seen, name]);
  };
  const nested = (r: Resource): number => depth(r.name);
  // Resources whose seeded fields take another's ids (`ids_of`) after that one.
  const refDepth = (name: string, seen: string[] = []): number =>
    seen.includes(name)
      ? 0
      : Math.max(0, ...Object.values(sidecar.resources?.[name]?.fields ?? {}).map((f) => ('ids_of' in f ? 1 + refDepth(f.ids_of, [...seen, name]) : 0)));
  const seedOrder = [...resources.values()].sort((a, b) => nested(a) - nested(b) || refDepth(a.name) - refDepth(b.name));
  for (const [name, given] of Object.entries(options.records ?? {})) {
    const r = resources.get(name);
    if (r === undefined) throw new Error(`simulator: records.${name}: the description has no resource ${name}`);
    r.records = given;
  }
  for (const r of seedOrder) {
    const rs = sidecar.resources?.[r.name];
    if (options.records?.[r.name] !== undefined) continue;
    const count = seedCount(sidecar, r.name);
    if (r.recordRef === undefined && r.examples === undefined && rs?.template === undefined) continue;
    const rand = seedRandom(seed, r.name);
    const parent = r.declared?.parent;
    const parentIds = parent === undefined ? [] : [...(resources.get(parent.resource)?.records.keys() ?? [])];
    // Records a caller keeps (options.records, LazyRecords) are not walked: reading them would generate them all.
    const link = parent === undefined && count > 0 ? linkOf.get(r.name) : undefined;
    const parentRecords =
      link === undefined || options.records?.[link.resource] !== undefined ? [] : [...(resources.get(link.resource)?.records.values() ?? [])];
    const linked = link === undefined ? [] : parentRecords.map((s) => parentParams(link, s.record, getPath, s.parents)).filter((x) => x !== undefined);
    for (let i = 0; i < count; i++) {
      // Seeded timestamps are fixed (2026-01-01T00:00Z plus i steps, a minute unless timestamps.step_seconds says), so a seed always serves the same records.
      const at = new Date(Date.UTC(2026, 0, 1) + i * (rs?.timestamps?.step_seconds ?? 60) * 1000).toISOString();
      const seedFields = rs?.seed === undefined ? undefined : (fill(seedOf(rs, i), { n: i + 1 }) as Json);
      // Under a parent in turn: the sidecar's declared one, else the one the path implies (each seeded repository gets issues).
      const parents =
        parent !== undefined && parentIds.length > 0
          ? { [parent.param]: parentIds[i % parentIds.length] as string }
          : linked.length > 0
            ? { ...linked[i % linked.length] }
            : {};
      // The template may name the parent, as a created record's does ({{file_key}}).
      // A sidecar template is the record's start; else the description's own examples, in turn.
      const base = rs?.template === undefined ? r.examples?.[i % r.examples.length] : undefined;
      const record = newRecord(r, (like) => newId(rand, like), i + 1, seedFields, at, base, parents);
      // A record named by another field (an issue's number) keeps a unique id too.
      const like = ((peek(r.recordRef) ?? {}) as Json).id;
      if (r.idField !== 'id' && (typeof like === 'number' || typeof like === 'string')) record.id = newId(rand, like);
      // A name or title every record shares (the description's example) is numbered to tell records apart.
      if (rs?.template === undefined)
        for (const k of ['name', 'title']) if (typeof record[k] === 'string' && repeats(r, k, record[k], count)) record[k] = `${record[k] as string} ${i + 1}`;
      // Declared fields: a value drawn from a pool of the sidecar, a list given in place, or another resource's ids.
      for (const [path, f] of Object.entries(rs?.fields ?? {})) {
        // Another resource's ids as its records hold them: numbers stay numbers (integer ids).
        const other = 'ids_of' in f ? resources.get(f.ids_of) : undefined;
        const values =
          'pool' in f
            ? (sidecar.pools?.[f.pool] ?? [])
            : other !== undefined
              ? [...other.records.values()].map((s) => idAt(s.record, other.idField) as Json)
              : 'one_of' in f
                ? f.one_of
                : [];
        // Shared, not copied (100 000 seeded records stay cheap): writes replace a field's value, and
        // an update that sets fields inside one copies it first (merge).
        // The record's own id taken from another resource's (a call's transcript keyed by the call's id): in turn, so ids stay unique.
        setPath(record, path, path === r.idField && 'ids_of' in f ? values[i % values.length] : values[Math.floor(rand() * values.length)]);
      }
      uniqueLookups(r, record, i + 1);
      r.records.set(String(idAt(record, r.idField)), { record, parents });
    }
  }
}
