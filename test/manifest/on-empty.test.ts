/**
 * response.on_empty (issue 37, items 15-16): a write the vendor answers with 204 or an empty 2xx
 * is read back with a declared action of the entity, never an upstream_protocol_error; the loader
 * checks the declaration; and every connector whose vendor description says a write answers
 * without a body declares one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConnectorRuntime } from '../../src/index.ts';
import { connectorRegistry, loadManifestText } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';
import { mutate, problems } from '../helpers/manifest.ts';

type Rec = Record<string, any>;

/** Granola's notes with an update (PATCH /v1/notes/{id}) declaring `onEmpty`. */
function withUpdate(onEmpty: unknown, extra: (m: Rec) => void = () => undefined): string {
  return mutate((m) => {
    m.entities.notes.actions.update = {
      params: { note_id: { type: 'string', required: true }, title: { type: 'string' } },
      request: { method: 'PATCH', path: '/v1/notes/{{params.note_id}}', body: { title: '{{params.title}}' } },
      response: { record: '{{body}}', ...(onEmpty === undefined ? {} : { on_empty: onEmpty }) },
    };
    extra(m);
  });
}

const NOTE = {
  id: 'not_1d3tmYTlCICgjy',
  title: 'Edited',
  owner: { name: 'A', email: 'a@example.com' },
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-02T00:00:00Z',
};

/** A fake upstream: PATCH answers `patch` (status, body), GET answers the note; every request is recorded. */
function upstream(patch: { status: number; body?: string }, get: { status: number; body: string } = { status: 200, body: JSON.stringify(NOTE) }) {
  const seen: { method: string; path: string }[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ method: req.method, path: new URL(req.url).pathname });
    const a = req.method === 'GET' ? get : patch;
    return new Response(a.body ?? null, { status: a.status, headers: a.body === undefined ? {} : { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { seen, fetchImpl };
}

const runtime = (text: string, fetchImpl: typeof fetch) =>
  new ConnectorRuntime(loadManifestText(text, 'test.yaml'), { api_key: 'grn_test' } as never, {
    baseUrl: 'https://api.example.com',
    fetch: fetchImpl,
    limiter: null,
    retry: { baseDelayMs: 1 },
  });
const update = (rt: ConnectorRuntime) => rt.execute('notes' as never, 'update' as never, { note_id: NOTE.id, title: 'Edited' } as never);

describe('a write answered without a body', () => {
  const READ_BACK = { action: 'get', params: { note_id: '{{params.note_id}}' } };

  it('204: the record is read back with the declared action, and that answer is the result', async () => {
    const { seen, fetchImpl } = upstream({ status: 204 });
    const r = await update(runtime(withUpdate(READ_BACK), fetchImpl));
    expect(r.data).toMatchObject({ id: NOTE.id, title: 'Edited' });
    expect(seen).toEqual([
      { method: 'PATCH', path: `/v1/notes/${NOTE.id}` },
      { method: 'GET', path: `/v1/notes/${NOTE.id}` },
    ]);
  });

  it('an empty 200 too; an answer with a body is used as is (no read-back)', async () => {
    const empty = upstream({ status: 200, body: '' });
    expect((await update(runtime(withUpdate(READ_BACK), empty.fetchImpl))).data).toMatchObject({ id: NOTE.id });
    expect(empty.seen.map((s) => s.method)).toEqual(['PATCH', 'GET']);
    const full = upstream({ status: 200, body: JSON.stringify({ ...NOTE, title: 'From the answer' }) });
    expect((await update(runtime(withUpdate(READ_BACK), full.fetchImpl))).data).toMatchObject({ title: 'From the answer' });
    expect(full.seen.map((s) => s.method)).toEqual(['PATCH']);
  });

  it("the read-back's failure is the call's error; without on_empty a 204 stays upstream_protocol_error", async () => {
    const gone = upstream({ status: 204 }, { status: 404, body: JSON.stringify({ message: 'Not found' }) });
    expect((await failure(update(runtime(withUpdate(READ_BACK), gone.fetchImpl)))).code).toBe('upstream_not_found');
    const plain = upstream({ status: 204 });
    const e = await failure(update(runtime(withUpdate(undefined), plain.fetchImpl)));
    expect(e.code).toBe('upstream_protocol_error');
    expect(e.message).toMatch(/answered notes\.update with an empty body/);
  });
});

describe('a write answered 202 without a body, nothing to read back: on_empty.record', () => {
  const FROM_CALL = { record: "{{object 'id' headers.x-request-id 'title' params.title 'status' status}}" };

  it('renders the record from the call (params, headers, status), with no second request', async () => {
    const seen: string[] = [];
    const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(new Request(input, init).method);
      return new Response(null, { status: 202, headers: { 'x-request-id': 'req_42' } });
    }) as typeof fetch;
    expect((await update(runtime(withUpdate(FROM_CALL), fetchImpl))).data).toEqual({ id: 'req_42', title: 'Edited', status: 202 });
    expect(seen).toEqual(['PATCH']);
  });

  it('refuses both or neither of action and record, and params beside a record', () => {
    expect(problems(withUpdate(FROM_CALL))).toEqual([]);
    expect(problems(withUpdate({ ...FROM_CALL, action: 'get' })).join('\n')).toMatch(/on_empty takes exactly one of action .* and record/);
    expect(problems(withUpdate({})).join('\n')).toMatch(/on_empty takes exactly one of action .* and record/);
    expect(problems(withUpdate({ ...FROM_CALL, params: { note_id: 'x' } })).join('\n')).toMatch(/on_empty\.params.*params are for a read-back action/);
    expect(problems(withUpdate({ record: '{{params.nope}}' })).join('\n')).toMatch(/on_empty\.record/);
  });
});

describe('the loader checks on_empty', () => {
  it('accepts a read-back with get and its required params', () => {
    expect(problems(withUpdate({ action: 'get', params: { note_id: '{{params.note_id}}' } }))).toEqual([]);
  });

  it('refuses an unknown or list action, itself, an unknown param, a missing required param, an undeclared template variable', () => {
    const said = (onEmpty: unknown) => problems(withUpdate(onEmpty)).join('\n');
    expect(said({ action: 'fetch', params: {} })).toMatch(/on_empty\.action.*"fetch" is not another action of this entity that answers one record/);
    expect(said({ action: 'list' })).toMatch(/"list" is not another action/);
    expect(said({ action: 'update', params: { note_id: '{{params.note_id}}' } })).toMatch(/"update" is not another action/);
    expect(said({ action: 'get', params: { note_id: '{{params.note_id}}', colour: 'red' } })).toMatch(
      /on_empty\.params\.colour.*"colour" is not a param of get/,
    );
    expect(said({ action: 'get', params: {} })).toMatch(/get needs its required param "note_id"/);
    expect(said({ action: 'get', params: { note_id: '{{params.nope}}' } })).toMatch(/on_empty\.params\.note_id/);
  });

  it('refuses on_empty on a list action, and a read-back action that has an on_empty of its own (no chains)', () => {
    const onList = problems(withUpdate(undefined, (m) => (m.entities.notes.actions.list.response.on_empty = { action: 'get', params: { note_id: 'x' } }))).join(
      '\n',
    );
    expect(onList).toMatch(/on_empty is for actions that answer one record; list answers a list/);
    const chained = problems(
      withUpdate(
        { action: 'get', params: { note_id: '{{params.note_id}}' } },
        (m) => (m.entities.notes.actions.get.response.on_empty = { action: 'update', params: { note_id: '{{params.note_id}}' } }),
      ),
    ).join('\n');
    expect(chained).toMatch(/"get" is not another action of this entity that answers one record without an on_empty of its own/);
  });
});

describe('every connector', () => {
  /** The 2xx answers an OpenAPI operation declares without a body: 204/205, or a 2xx with no content. */
  const emptyAnswers = (op: Rec): string[] =>
    Object.entries((op['responses'] ?? {}) as Rec)
      .filter(
        ([s, r]) =>
          /^2\d\d$/.test(s) &&
          (s === '204' ||
            s === '205' ||
            (r as Rec)['content'] === undefined ||
            Object.keys((r as Rec)['content'] as Rec).length === 0 ||
            Object.values((r as Rec)['content'] as Rec).every(
              (c) => c === null || (c as Rec)['schema'] === undefined || Object.keys((c as Rec)['schema'] as Rec).length === 0,
            )),
      )
      .map(([s]) => s);

  it('declares on_empty on each write whose vendor description says it may answer without a body', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const [type, loaded] of connectorRegistry()) {
      const vd = loaded.manifest.vendor_description;
      if (vd === undefined || vd.format !== 'openapi') continue;
      const file = join('connectors', type, vd.path);
      const text = readFileSync(file, 'utf8');
      const doc = (file.endsWith('.json') ? JSON.parse(text) : parse(text)) as Rec;
      const norm = (p: string) => p.replace(/\{[^}]+\}/g, '{}').replace(/\{\{params\.[a-z_]+\}\}/g, '{}');
      for (const [entity, e] of loaded.entities) {
        for (const [name, a] of e.actions) {
          const method = a.def.request.method ?? 'GET';
          if (method === 'GET' || a.def.request.graphql !== undefined) continue;
          const path = norm(a.def.request.path.replace(/\{\{params\.[a-z_]+\}\}/g, '{}'));
          const key = Object.keys((doc['paths'] ?? {}) as Rec).find((k) => norm(k) === path);
          const op = key === undefined ? undefined : ((doc['paths'] as Rec)[key] as Rec)[method.toLowerCase()];
          if (op === undefined) continue;
          checked++;
          // Responses may be $refs to components/responses (Figma's): read them where they point.
          const deref = (r: unknown): unknown => {
            const ref = (r as Rec | null)?.['$ref'];
            if (typeof ref !== 'string' || !ref.startsWith('#/')) return r;
            return ref
              .slice(2)
              .split('/')
              .reduce<unknown>((at, k) => (at as Rec | undefined)?.[k], doc);
          };
          const responses = Object.fromEntries(Object.entries(((op as Rec)['responses'] ?? {}) as Rec).map(([k, r]) => [k, deref(r)]));
          const empty = emptyAnswers({ ...(op as Rec), responses });
          if (empty.length > 0 && a.onEmpty === undefined && !['list', 'changes', 'scroll'].includes(name))
            missing.push(`${type} ${entity}.${name} (${method} ${key}: ${empty.join(', ')})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  }, 120_000);
});
