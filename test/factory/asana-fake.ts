/**
 * A small stateful stand-in for Asana's API (or any description in its shapes, such as
 * test/fixtures/factory/offset-token.yaml), for init's end-to-end test until the generic
 * `switchboard simulate --openapi` lands: every request is checked against the vendored
 * description (the operation exists, a bearer token is sent, path params are present, required
 * query params are given, and the JSON body validates against the operation's requestBody
 * schema with ajv), and answers in Asana's shapes: `{data: ...}`, pages of `limit` with
 * `next_page: {offset, path, uri}`, errors as `{errors: [{message}]}`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { createAjv } from '../../src/manifest/index.ts';

type Obj = Record<string, any>;

export interface AsanaFake {
  url: string;
  /** Every request received: method, path with query, and the problem found (if refused). */
  requests: { method: string; url: string; refused?: string }[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

/** OpenAPI 3.0 schema → what ajv takes: `nullable` without a `type` (in allOf parts) dropped; cycles kept. */
function openApi30(schema: unknown, seen = new WeakMap<object, unknown>()): unknown {
  if (schema === null || typeof schema !== 'object') return schema;
  if (seen.has(schema)) return seen.get(schema);
  const out: Obj = Array.isArray(schema) ? [] : {};
  seen.set(schema, out);
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'nullable' && (schema as Obj)['type'] === undefined) continue;
    if (k === 'example' || k.startsWith('x-')) continue;
    out[k] = openApi30(v, seen);
  }
  return out;
}

export async function startAsanaFake(descriptionFile: string): Promise<AsanaFake> {
  const doc = (await $RefParser.dereference(descriptionFile, { dereference: { circular: true } })) as Obj;
  const ajv = createAjv();
  // Requests arrive under the path of the description's server URL (/api/1.0 for Asana).
  const prefix = new URL(((doc['servers'] as Obj[] | undefined)?.[0]?.['url'] as string | undefined) ?? 'http://x/').pathname.replace(/\/$/, '');
  const routes = Object.entries(doc['paths'] as Obj).map(([path, item]) => ({
    path,
    regex: new RegExp(`^${path.replace(/\{[^}]+\}/g, '([^/]+)')}$`),
    item: item as Obj,
  }));
  const stores = new Map<string, Map<string, Obj>>();
  let next = 1000;
  const requests: AsanaFake['requests'] = [];

  const server: Server = createServer((req, res) => {
    void (async () => {
      try {
        await handle(req, res);
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ message: `fake: ${(e as Error).message}` }] }));
      }
    })();
  });
  const handle = async (req: IncomingMessage, res: import('node:http').ServerResponse): Promise<void> => {
    {
      const url = new URL(req.url ?? '/', 'http://fake');
      const path = url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : url.pathname;
      const method = (req.method ?? 'GET').toLowerCase();
      const entry: AsanaFake['requests'][number] = { method: req.method ?? 'GET', url: `${path}${url.search}` };
      requests.push(entry);
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const refuse = (status: number, message: string): void => {
        entry.refused = message;
        send(status, { errors: [{ message }] });
      };
      const route = routes.find((r) => r.regex.test(path));
      const op = route?.item[method] as Obj | undefined;
      if (route === undefined || op === undefined) return refuse(404, `No route ${req.method} ${path} in the description`);
      if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) return refuse(401, 'Not Authorized');
      const params = [...((route.item['parameters'] as Obj[]) ?? []), ...((op['parameters'] as Obj[]) ?? [])];
      for (const p of params) {
        if (p['in'] === 'query' && p['required'] && !url.searchParams.has(p['name'])) return refuse(400, `${p['name']}: Missing input`);
        if (p['in'] === 'query' && url.searchParams.has(p['name']) && p['schema']?.['type'] === 'integer' && !/^-?\d+$/.test(url.searchParams.get(p['name'])!))
          return refuse(400, `${p['name']}: Not an integer`);
      }
      const known = new Set(params.map((p) => p['name']));
      for (const k of url.searchParams.keys()) if (!known.has(k)) return refuse(400, `${k}: Unknown query parameter`);
      let body: Obj | undefined;
      const schema = op['requestBody']?.['content']?.['application/json']?.['schema'];
      if (schema !== undefined) {
        try {
          body = JSON.parse(await readBody(req)) as Obj;
        } catch {
          return refuse(400, 'Could not parse the JSON body');
        }
        const validate = ajv.compile(openApi30(schema) as Obj);
        if (!validate(body)) return refuse(400, `Invalid body: ${ajv.errorsText(validate.errors)}`);
      }
      const ids = route.regex.exec(path)!.slice(1);
      const collection = route.path.replace(/\/\{[^}]+\}$/, '');
      const store = stores.get(collection) ?? new Map<string, Obj>();
      stores.set(collection, store);
      const resourceType = collection.slice(1).replace(/s$/, '');
      if (method === 'post' && ids.length === 0) {
        const gid = String(next++);
        const record = { gid, resource_type: resourceType, ...(body?.['data'] as Obj) };
        store.set(gid, record);
        return send(201, { data: record });
      }
      if (ids.length === 1) {
        const record = store.get(ids[0]!);
        if (record === undefined) return refuse(404, `${resourceType}: Unknown object: ${ids[0]!}`);
        if (method === 'put') Object.assign(record, body?.['data'] as Obj);
        return send(200, { data: record });
      }
      // A list: `limit` records from the offset token on; next_page only while more remain.
      const all = [...store.values()];
      const limit = Number(url.searchParams.get('limit') ?? all.length);
      const start = url.searchParams.has('offset') ? Number(Buffer.from(url.searchParams.get('offset')!, 'base64url').toString()) : 0;
      if (!Number.isInteger(start)) return refuse(400, 'offset: Invalid offset token');
      const page = all.slice(start, start + limit).map((r) => ({ gid: r['gid'], resource_type: r['resource_type'], name: r['name'] }));
      const token = Buffer.from(String(start + limit)).toString('base64url');
      const more = start + limit < all.length && url.searchParams.has('limit');
      return send(200, {
        data: page,
        next_page: more ? { offset: token, path: `${collection}?limit=${limit}&offset=${token}`, uri: `http://fake${collection}?offset=${token}` } : null,
      });
    }
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
