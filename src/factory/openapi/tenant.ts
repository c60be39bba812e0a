/**
 * Account or tenant ids every call needs, which descriptions declare as a parameter of each
 * operation: a header required everywhere (`<vendor>-tenant-id`), a path parameter leading every path
 * (`/Accounts/{AccountSid}/...`). One value per connection, so a credential field of every auth
 * variant that every action sends, not a param each caller passes again.
 */
import { safeName, shortText } from '../scaffold.ts';
import { toJsonSchema } from '../json-schema.ts';
import { isObj, type Obj, type Parameter, type PathItem } from './document.ts';
import type { Notes } from './notes.ts';
import type { EntityPlan } from './plan.ts';

export interface SharedId {
  /** The description's name. */
  name: string;
  in: 'header' | 'path';
  /** The credential field. */
  field: string;
  schema: Obj;
  /** A path param: the paths' prefix up to it, with it as a template (`/2010-04-01/Accounts/{{credentials.account_sid}}`), moved into the base URL. */
  prefix?: string;
}

/** A path's segments without a format suffix (`Accounts.json` → `Accounts`). */
const segments = (path: string): string[] =>
  path
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/\.[A-Za-z]+$/, ''));
const param = (seg: string): string | undefined => /^\{([^}]+)\}$/.exec(seg)?.[1];

/** The ids every chosen operation takes: required headers without a default, and leading path params. */
export function findSharedIds(paths: Record<string, PathItem>, chosen: EntityPlan[]): SharedId[] {
  const ops = chosen.flatMap((p) => Object.values(p.ops)).filter((o) => o !== undefined);
  if (ops.length < 2) return [];
  const out: SharedId[] = [];
  const first = ops[0]!;
  const everywhere = (pred: (ps: Parameter[], path: string) => boolean): boolean => ops.every((o) => pred(o.pathParams, o.path));
  for (const p of first.pathParams) {
    if (!isObj(p) || p.in !== 'header' || p.required !== true || (isObj(p.schema) && p.schema['default'] !== undefined)) continue;
    if (/^(authorization|accept|content-type)$/i.test(p.name)) continue;
    const lower = p.name.toLowerCase();
    if (!everywhere((ps) => ps.some((q) => isObj(q) && q.in === 'header' && q.required === true && q.name.toLowerCase() === lower))) continue;
    out.push({ name: p.name, in: 'header', field: safeName(p.name), schema: fieldSchema(p) });
  }
  // A path param at the same place in every chosen path, whose only absences in the whole
  // description are the paths of what it names (/Accounts, /Accounts/{Sid}).
  const keys = new Set(chosen.map((c) => c.itemParam));
  for (const seg of segments(first.path)) {
    const name = param(seg);
    if (name === undefined || keys.has(name)) continue;
    const at = segments(first.path).indexOf(seg);
    const prefix = segments(first.path).slice(0, at).join('/');
    const holds = (path: string): boolean => segments(path).slice(0, at).join('/') === prefix && param(segments(path)[at] ?? '') === name;
    if (!ops.every((o) => holds(o.path))) continue;
    const all = Object.keys(paths);
    const own = (path: string): boolean => segments(path).slice(0, at).join('/') === prefix && segments(path).length <= at + 1;
    // A few others may stand apart (a health check, a token endpoint).
    const apart = all.filter((path) => !holds(path) && !own(path)).length;
    // And it holds several kinds of thing (an account's messages, calls, recordings), not one
    // parent's children (a repo's issues): at least three different segments follow it.
    const kinds = new Set(
      all
        .filter(holds)
        .map((path) => segments(path)[at + 1])
        .filter((k) => k !== undefined),
    );
    if (kinds.size < 3 || apart > Math.max(1, all.length / 20)) continue;
    const raw = first.path
      .split('/')
      .filter(Boolean)
      .slice(0, at + 1);
    if (raw.at(-1) !== `{${name}}`) continue;
    const declared = first.pathParams.find((q) => isObj(q) && q.in === 'path' && q.name === name);
    const field = safeName(name);
    const schema = fieldSchema(declared);
    // A base URL variable needs a pattern keeping the request on the vendor's host: one path segment.
    schema['pattern'] ??= '[A-Za-z0-9][A-Za-z0-9_.~-]{0,127}';
    out.push({ name, in: 'path', field, schema, prefix: `/${[...raw.slice(0, -1), `{{credentials.${field}}}`].join('/')}` });
  }
  return out;
}

/** A credential field's schema from the parameter's: a non-secret string, with its pattern and description. */
function fieldSchema(p: Parameter | undefined): Obj {
  const js = p?.schema !== undefined ? toJsonSchema(p.schema, { depth: 0 }) : {};
  const description = shortText(p?.description);
  return { type: 'string', ...(typeof js['pattern'] === 'string' ? { pattern: js['pattern'] } : {}), ...(description ? { description } : {}) };
}

/** Each shared id as a field of every auth variant; the headers sent on every request. */
export function applySharedIds(shared: SharedId[], manifest: Obj, notes: Notes): void {
  const { guess } = notes;
  const auth = manifest['auth'] as Obj[];
  for (const s of shared) {
    for (const [i, variant] of auth.entries()) {
      const fields = variant['fields'] as Obj;
      if (fields[s.field] !== undefined) continue;
      fields[s.field] = s.schema;
      if (i === 0)
        guess(
          ['auth', i, 'fields', s.field],
          `${s.in === 'header' ? `the ${s.name} header is required by every operation` : `{${s.name}} leads every path`}: one value per connection, sent by every action; if another field of the variant already holds it (the user name), use that one`,
        );
    }
    if (s.in === 'header') {
      (manifest['headers'] as Obj)[s.name] = `{{credentials.${s.field}}}`;
      guess(['headers', s.name], `required by every operation: sent from the credential field ${s.field}`);
    }
    if (s.prefix !== undefined) movePrefix(s.prefix, manifest, notes);
  }
}

/** A path prefix every action's path starts with, moved into the base URL (path templates may only use params). */
function movePrefix(prefix: string, manifest: Obj, { guess, report }: Notes): void {
  const baseUrl = manifest['base_url'] as { default: string; regions?: Record<string, string> };
  baseUrl.default += prefix;
  for (const r of Object.keys(baseUrl.regions ?? {})) baseUrl.regions![r] += prefix;
  guess(['base_url', 'default'], `ends with ${prefix}: the account every path of the description starts with`);
  for (const entity of Object.values(manifest['entities'] as Record<string, { actions: Record<string, { request: Obj }> }>)) {
    for (const action of Object.values(entity.actions)) action.request['path'] = String(action.request['path']).slice(prefix.length) || '/';
  }
  const check = manifest['check'] as { request: Obj } | undefined;
  if (check === undefined) return;
  if (String(check.request['path']).startsWith(prefix)) check.request['path'] = String(check.request['path']).slice(prefix.length) || '/';
  else {
    delete manifest['check'];
    report.push(`credential check: ${String(check.request['path'])} is not under ${prefix}, now part of the base URL`);
  }
}

/** Host labels that stand for the customer's own (a data centre, an instance): `https://server.api.example.com`. */
const PLACEHOLDER_LABEL = /^(server|subdomain|instance|tenant|dc|datacenter|data-center|domain|company|account|site|your[-_]?[a-z]+)$/i;

/**
 * A base URL whose first host label is a placeholder (`server.api.example.com`: the data centre,
 * which the customer's API key ends with): a credential field of every variant, like a server
 * variable would be.
 */
export function placeholderHost(manifest: Obj, { guess }: Notes): void {
  const baseUrl = manifest['base_url'] as { default: string; regions?: unknown };
  if (baseUrl.default.includes('{{') || baseUrl.regions !== undefined) return;
  const url = new URL(baseUrl.default);
  const labels = url.hostname.split('.');
  const label = labels[0]!;
  if (labels.length < 3 || !PLACEHOLDER_LABEL.test(label)) return;
  const field = safeName(label);
  baseUrl.default = baseUrl.default.replace(`//${label}.`, `//{{credentials.${field}}}.`);
  for (const variant of manifest['auth'] as Obj[]) {
    const fields = variant['fields'] as Obj;
    fields[field] ??= {
      type: 'string',
      pattern: '[A-Za-z0-9][A-Za-z0-9-]{0,62}',
      description: `The first label of the API's host, "${label}" in the description (the customer's own: a data centre, an instance)`,
    };
  }
  guess(
    ['base_url', 'default'],
    `the host "${url.hostname}" starts with the placeholder "${label}": the customer's own label, a credential field of every variant (it may be part of the API key, e.g. its suffix)`,
  );
}
