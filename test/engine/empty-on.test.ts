/**
 * response.empty_on: statuses a vendor answers without a body when there is nothing to answer
 * (204 No Content for an empty collection, 304 Not Modified for a list asked for with
 * If-Modified-Since): a list reads no records and stops paging, a get is upstream_not_found; the
 * loader refuses it on a write; without it such an answer stays an error.
 */
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';
import { mutate, problems } from '../helpers/manifest.ts';

type Rec = Record<string, any>;

/** Granola's notes with empty_on on its list and get (or `on` other actions). */
const withEmptyOn = (statuses: number[], on: string[] = ['list', 'get']): string =>
  mutate((m: Rec) => {
    if (statuses.length > 0) for (const a of on) m.entities.notes.actions[a].response.empty_on = statuses;
  });

/** A fake upstream answering each request with the next of `answers`; the requests' paths and queries are recorded. */
function upstream(answers: { status: number; body?: unknown }[]) {
  const seen: string[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    seen.push(`${url.pathname}${url.search}`);
    const a = answers.shift() ?? { status: 500 };
    const body = a.body === undefined ? null : JSON.stringify(a.body);
    return new Response(body, { status: a.status, headers: body === null ? {} : { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { seen, fetchImpl };
}

const runtime = (text: string, fetchImpl: typeof fetch) =>
  new ConnectorRuntime(loadManifestText(text, 'test.yaml'), { api_key: 'grn_test' } as never, {
    baseUrl: 'https://api.example.com',
    fetch: fetchImpl,
    limiter: null,
    retry: { baseDelayMs: 1, maxAttempts: 1 },
  });

const NOTE = {
  id: 'not_1d3tmYTlCICgjy',
  title: 'Kick-off',
  owner: { name: 'A', email: 'a@example.com' },
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
};

describe('response.empty_on', () => {
  it('a 204 or 304 without a body is a list with no records and no next page', async () => {
    for (const status of [204, 304]) {
      const { seen, fetchImpl } = upstream([{ status }, { status }]);
      const rt = runtime(withEmptyOn([204, 304]), fetchImpl);
      const r = await rt.execute('notes' as never, 'list' as never, {} as never);
      expect(r).toEqual({ data: [], meta: { cursor: null, has_more: null } });
      const pages: unknown[] = [];
      for await (const page of rt.pages('notes' as never, {} as never)) pages.push(page.data);
      expect(pages).toEqual([[]]);
      expect(seen).toEqual(['/v1/notes', '/v1/notes']);
    }
  });

  it('ends paging on such an answer after a full page', async () => {
    const { seen, fetchImpl } = upstream([{ status: 200, body: { notes: [NOTE], cursor: 'c2', hasMore: true } }, { status: 204 }]);
    const rt = runtime(withEmptyOn([204]), fetchImpl);
    const ids: unknown[] = [];
    for await (const r of rt.records('notes' as never, {} as never)) ids.push(r['id']);
    expect(ids).toEqual([NOTE.id]);
    expect(seen).toEqual(['/v1/notes', '/v1/notes?cursor=c2']);
  });

  it('a get answered so is upstream_not_found; a body with that status is read as usual', async () => {
    const empty = upstream([{ status: 204 }]);
    const e = await failure(runtime(withEmptyOn([204]), empty.fetchImpl).execute('notes' as never, 'get' as never, { note_id: NOTE.id } as never));
    expect(e.code).toBe('upstream_not_found');
    const full = upstream([{ status: 200, body: NOTE }]);
    const r = await runtime(withEmptyOn([200]), full.fetchImpl).execute('notes' as never, 'get' as never, { note_id: NOTE.id } as never);
    expect(r.data).toMatchObject({ id: NOTE.id });
  });

  it('without empty_on, an empty 204 list is a protocol error and a 304 is refused', async () => {
    const e204 = await failure(runtime(withEmptyOn([]), upstream([{ status: 204 }]).fetchImpl).execute('notes' as never, 'list' as never, {} as never));
    expect(e204.code).toBe('upstream_protocol_error');
    const e304 = await failure(runtime(withEmptyOn([], []), upstream([{ status: 304 }]).fetchImpl).execute('notes' as never, 'list' as never, {} as never));
    expect(e304.code).toBe('upstream_rejected');
  });

  it('the loader refuses it on a write', () => {
    const text = mutate((m: Rec) => {
      m.entities.notes.actions.create = {
        params: { title: { type: 'string' } },
        request: { method: 'POST', path: '/v1/notes', body: { title: '{{params.title}}' } },
        response: { record: '{{body}}', empty_on: [204] },
      };
    });
    expect(problems(text).join('\n')).toContain('empty_on is for get and list actions');
  });
});
