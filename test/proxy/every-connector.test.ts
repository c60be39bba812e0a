/**
 * For every connector of the registry (no connector named here), a request its vendor's API
 * accepts but no action of its manifest renders goes through the proxy to its simulator, with the
 * connector's auth, and the answer comes back byte for byte as the simulator sent it.
 *
 * The request is derived from the vendor description shipped with the connector (the one its
 * simulator serves):
 * - OpenAPI: a GET operation without path parameters or required query parameters whose path no
 *   action requests (the credential check's, which is no action, first: the simulator surely
 *   serves it). Where the trimmed description has none, a GET of a modelled list path with a
 *   query parameter the description allows but the action never sends (a boolean, number, enum
 *   or date-time one, whose value can be made up). Where every GET takes a path id, a POST of a
 *   modelled create path with an empty body and such a query parameter.
 * - GraphQL: a root Query field without required arguments that no action's query selects (the
 *   check's first), with the scalar fields of its type.
 */
import { readFileSync } from 'node:fs';
import { buildSchema, getNamedType, isObjectType, isScalarType, isEnumType, isNonNullType, type GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { connectorRegistry, type LoadedManifest } from '../../src/manifest/index.ts';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';

interface Derived {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
  why: string;
}

type Json = Record<string, unknown>;
type Operation = { parameters?: Json[] };

/** Every request template of the manifest's actions (entity → action → request), as written. */
function actionRequests(m: LoadedManifest): Json[] {
  const out: Json[] = [];
  for (const e of m.entities.values()) for (const a of e.actions.values()) if (a.def.request !== undefined) out.push(a.def.request as unknown as Json);
  return out;
}

/** A path template with its variables as {} ("/a/{{params.id}}" and "/a/{id}" alike). */
const shape = (path: string): string => path.replace(/\{\{[^}]*\}\}/g, '{}').replace(/\{[^}]*\}/g, '{}');

function resolveParam(doc: Json, p: Json): Json {
  const ref = p['$ref'];
  if (typeof ref !== 'string') return p;
  return ref
    .split('/')
    .slice(1)
    .reduce<unknown>((o, k) => (o as Json)[k], doc) as Json;
}

/** A made-up value for a query parameter whose schema admits one without knowing the data. */
function valueFor(schema: Json | undefined): string | undefined {
  if (schema === undefined) return undefined;
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) return String(schema['enum'][0]);
  if (schema['type'] === 'boolean') return 'false';
  if (schema['type'] === 'integer' || schema['type'] === 'number') return String(Math.max(1, Number(schema['minimum'] ?? 1)));
  if (schema['type'] === 'string' && schema['format'] === 'date-time') return '2100-01-01T00:00:00Z';
  return undefined;
}

/** Whether a literal path is an instance of a description's path template (each {param} one segment). */
function templateMatches(template: string, path: string): boolean {
  const re = new RegExp(
    `^${template
      .split(/\{[^}]+\}/)
      .map((s) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[^/]+')}$`,
  );
  return re.test(path);
}

/**
 * The description's paths as the manifest's paths name them: where the base URL's path names the
 * account every path starts with (/v2.1/accounts/{{credentials.account_id}} after the server's
 * /restapi), that prefix is cut (the account's own path is "/"), and paths outside it are left out.
 */
function underBaseUrl(m: LoadedManifest, doc: Json): Record<string, Record<string, Operation>> {
  const paths = doc['paths'] as Record<string, Record<string, Operation>>;
  const basePath = decodeURIComponent(new URL(m.manifest.base_url.default).pathname).replace(/\/$/, '');
  if (!basePath.includes('{{')) return paths;
  const server = new URL(String((doc['servers'] as Json[] | undefined)?.[0]?.['url'] ?? '/').replace(/\{[^}]*\}/g, 'x'), 'http://localhost').pathname.replace(
    /\/$/,
    '',
  );
  const prefix = shape(basePath.slice(server.length)).split('/');
  const out: Record<string, Record<string, Operation>> = {};
  for (const [path, ops] of Object.entries(paths)) {
    const segs = path.split('/');
    if (shape(segs.slice(0, prefix.length).join('/')) === prefix.join('/')) out[`/${segs.slice(prefix.length).join('/')}`] = ops;
  }
  return out;
}

function fromOpenApi(m: LoadedManifest, file: string): Derived {
  const text = readFileSync(file, 'utf8');
  const doc = (file.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) as Json;
  const paths = underBaseUrl(m, doc);
  const requests = actionRequests(m);
  const modelled = new Set(requests.map((r) => `${String(r['method'] ?? 'GET').toUpperCase()} ${shape(String(r['path'] ?? ''))}`));
  const checkPath = (m.manifest.check?.request as Json | undefined)?.['path'];
  const params = (path: string, op: Operation): Json[] =>
    [...(((paths[path] as Json)['parameters'] as Json[] | undefined) ?? []), ...(op.parameters ?? [])].map((p) => resolveParam(doc, p));
  const candidates = Object.entries(paths)
    .filter(([path, ops]) => ops['get'] !== undefined && !path.includes('{') && !modelled.has(`GET ${shape(path)}`))
    .filter(([path, ops]) => !params(path, ops['get'] as Operation).some((p) => p['in'] === 'query' && p['required'] === true))
    .map(([path]) => path)
    .sort((a, b) => Number(b === checkPath) - Number(a === checkPath));
  if (candidates[0] !== undefined)
    return { method: 'GET', path: candidates[0], why: `GET ${candidates[0]}: an operation of the description no action requests` };
  // RPC over POST (every route a POST of a JSON argument, Dropbox's): a route no action requests that takes no argument, posted with none (the check's first).
  const rpc = Object.entries(paths)
    .filter(([path, ops]) => ops['post'] !== undefined && !path.includes('{') && !modelled.has(`POST ${shape(path)}`))
    .filter(([path, ops]) => (ops['post'] as Json)['requestBody'] === undefined && !params(path, ops['post'] as Operation).some((p) => p['required'] === true))
    .map(([path]) => path)
    .sort((a, b) => Number(b === checkPath) - Number(a === checkPath));
  if (candidates.length === 0 && rpc[0] !== undefined && Object.values(paths).every((ops) => ops['get'] === undefined))
    return { method: 'POST', path: rpc[0], why: `POST ${rpc[0]}: a route of the description no action requests, taking no argument` };
  // The trimmed description has none: a modelled list path with a query parameter the description
  // allows, one its action never sends if there is one; else (every parameter of the trimmed
  // description is modelled) one beyond what a plain list call sends, with a made-up value.
  for (const unsentOnly of [true, false]) {
    for (const r of requests) {
      const path = String(r['path'] ?? '');
      if (String(r['method'] ?? 'GET').toUpperCase() !== 'GET' || path.includes('{')) continue;
      // The description's path, or the templated one it fills (/members/me/boards: /members/{idMember}/boards).
      const template = paths[path] !== undefined ? path : Object.keys(paths).find((t) => templateMatches(t, path));
      const op = template === undefined ? undefined : paths[template]?.['get'];
      if (op === undefined || template === undefined) continue;
      const sent = new Set(Object.keys((r['query'] as Json | undefined) ?? {}));
      for (const p of params(template, op)) {
        const name = String(p['name']);
        const value = valueFor(p['schema'] as Json | undefined);
        if (p['in'] !== 'query' || (unsentOnly && sent.has(name)) || value === undefined || /cursor|after|before_id|starting_after|page_token/i.test(name))
          continue;
        return {
          method: 'GET',
          path,
          query: { [name]: value },
          why: `GET ${path}?${name}=${value}: a query parameter the description allows${unsentOnly ? ' that no action sends' : ', beyond a plain list call'}`,
        };
      }
    }
  }
  // Every GET names a record by a path id (Google Sheets): a modelled create path without path
  // parameters, posted with an empty body and a query parameter the description allows that no action sends.
  for (const r of requests) {
    const path = String(r['path'] ?? '');
    const op = paths[path]?.['post'];
    if (String(r['method'] ?? 'GET').toUpperCase() !== 'POST' || path.includes('{') || op === undefined) continue;
    const sent = new Set(requests.flatMap((q) => Object.keys((q['query'] as Json | undefined) ?? {})));
    for (const p of params(path, op)) {
      const name = String(p['name']);
      const value = valueFor(p['schema'] as Json | undefined);
      if (p['in'] !== 'query' || sent.has(name) || value === undefined) continue;
      return {
        method: 'POST',
        path,
        query: { [name]: value },
        body: {},
        why: `POST ${path}?${name}=${value} {}: a query parameter the description allows that no action sends`,
      };
    }
  }
  throw new Error(`${m.type}: its description offers no request that no action renders`);
}

function fromGraphql(m: LoadedManifest, file: string): Derived {
  const schema = buildSchema(readFileSync(file, 'utf8'));
  const query = schema.getQueryType() as GraphQLObjectType;
  const actionText = JSON.stringify(actionRequests(m));
  const check = (m.manifest.check?.request as Json | undefined) ?? {};
  const checkText = JSON.stringify(check);
  const selects = (text: string, field: string): boolean => new RegExp(`[{\\s]${field}\\s*[({]`).test(text);
  const scalars = (t: GraphQLObjectType): string[] =>
    Object.values(t.getFields())
      .filter(
        (f) => f.args.every((a) => !isNonNullType(a.type)) && f.args.length === 0 && (isScalarType(getNamedType(f.type)) || isEnumType(getNamedType(f.type))),
      )
      .map((f) => f.name)
      .slice(0, 3);
  const fields = Object.values(query.getFields())
    .filter((f) => f.args.every((a) => !isNonNullType(a.type)) && !selects(actionText, f.name))
    .filter((f) => isObjectType(getNamedType(f.type)) && scalars(getNamedType(f.type) as GraphQLObjectType).length > 0)
    .sort((a, b) => Number(selects(checkText, b.name)) - Number(selects(checkText, a.name)));
  const f = fields[0];
  if (f === undefined) throw new Error(`${m.type}: its schema has no query field that no action selects`);
  const text = `query { ${f.name} { ${scalars(getNamedType(f.type) as GraphQLObjectType).join(' ')} } }`;
  return {
    method: 'POST',
    path: String(check['path'] ?? actionRequests(m)[0]?.['path']),
    body: { query: text },
    why: `${text}: a query field no action selects`,
  };
}

/** The request for a connector, from its vendor description. */
function derive(m: LoadedManifest): Derived {
  const d = m.vendorDescription;
  if (d === undefined) throw new Error(`${m.type} ships no vendor description`);
  return d.format === 'graphql' ? fromGraphql(m, d.file) : fromOpenApi(m, d.file);
}

/** A fetch that records every request and the exact bytes of every answer. */
function recordingFetch(): { fetch: FetchLike; seen: { url: string; headers: Record<string, string>; body: Buffer }[] } {
  const seen: { url: string; headers: Record<string, string>; body: Buffer }[] = [];
  const f: FetchLike = async (input, init) => {
    const res = await fetch(input, init);
    seen.push({ url: String(input), headers: { ...((init?.headers ?? {}) as Record<string, string>) }, body: Buffer.from(await res.clone().arrayBuffer()) });
    return res;
  };
  return { fetch: f, seen };
}

/** True when some request header (Basic auth decoded), or the query of an API that takes its credentials there, carries one of the credential values. */
function carriesCredentials(headers: Record<string, string>, credentials: Record<string, string>, url: URL): boolean {
  const values = Object.values(credentials).filter((v) => typeof v === 'string' && v.length >= 6);
  if ([...url.searchParams.values()].some((q) => values.includes(q))) return true;
  return Object.values(headers).some((h) => {
    const decoded = h.startsWith('Basic ') ? Buffer.from(h.slice(6), 'base64').toString('utf8') : h;
    return values.some((v) => decoded.includes(v));
  });
}

describe('every connector: a request no action models, through the proxy to its simulator', () => {
  let sandbox: Sandbox;
  const registry = connectorRegistry();
  beforeAll(async () => {
    sandbox = await startSandbox();
    // Ten simulators with their seeded data: slow on a loaded machine.
  }, 120_000);
  afterAll(() => sandbox?.close());

  it.each([...registry.keys()].sort())('%s', async (type) => {
    const manifest = registry.get(type) as LoadedManifest;
    const sim = sandbox.connectors[type];
    expect(sim, `no simulator for ${type}`).toBeDefined();
    const req = derive(manifest);
    const { fetch, seen } = recordingFetch();
    const rt = new ConnectorRuntime(manifest, sim!.credentials, { baseUrl: sim!.base_url, fetch, limiter: null });
    const answer = await rt.proxy({
      method: req.method,
      path: req.path,
      ...(req.query !== undefined ? { query: req.query } : {}),
      ...(req.body !== undefined ? { body: req.body } : {}),
    });
    expect(answer.status, `${req.why}: ${answer.body.toString().slice(0, 300)}`).toBeGreaterThanOrEqual(200);
    expect(answer.status, req.why).toBeLessThan(300);
    // A GraphQL API answers its refusals with 200 and a top-level errors list.
    if (req.body !== undefined && manifest.vendorDescription?.format === 'graphql')
      expect((JSON.parse(answer.body.toString()) as { errors?: unknown }).errors, req.why).toBeUndefined();
    // Sent once, where it was meant to go, with the connector's credentials; the answer unchanged.
    expect(seen).toHaveLength(1);
    const sent = new URL(seen[0]!.url);
    expect(sent.pathname).toBe(new URL(sim!.base_url).pathname.replace(/\/$/, '') + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) expect(sent.searchParams.get(k)).toBe(v);
    expect(carriesCredentials(seen[0]!.headers, sim!.credentials, sent), req.why).toBe(true);
    expect(answer.body.length).toBeGreaterThan(0);
    expect(answer.body.equals(seen[0]!.body)).toBe(true);
  });
});
