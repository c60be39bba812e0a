/**
 * The generic simulator on vendored descriptions with their sidecars, with no vendor code: a
 * search/pages/scroll/OAuth sidecar (Intercom's), RPC-style methods declared in the sidecar
 * (test/fixtures/factory/rpc.yaml), and resources the sidecar shapes with startAt pages and basic
 * tokens (Jira's). The rest is in openapi-simulator.test.ts and openapi-simulator-sidecar-shapes.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formDecode, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { call, type Rec } from './openapi-simulator-helpers.ts';

describe('Intercom’s vendored description and sidecar, with no Intercom code', () => {
  let sim: OpenApiSimulator;
  const dir = new URL('../../connectors/intercom/', import.meta.url).pathname;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: `${dir}openapi-2.14.json`, sidecar: `${dir}simulator.yaml`, tokens: ['tok'], seed: 2 });
  });
  afterAll(() => sim.close());
  const auth = { authorization: 'Bearer tok', 'intercom-version': '2.14' };

  it('creates then gets a contact, pages with pages.next.starting_after, answers error.list', async () => {
    const created = await call(sim, 'POST', '/contacts', { role: 'lead', email: 'ada@example.com', name: 'Ada' }, auth);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ type: 'contact', role: 'lead', email: 'ada@example.com', name: 'Ada' });
    expect((await call(sim, 'GET', `/contacts/${String(created.body.id)}`, undefined, auth)).body).toEqual(created.body);
    // Started from the sidecar's template, not a sample of the schema: nothing else is known yet.
    expect(created.body).toMatchObject({
      phone: null,
      external_id: null,
      custom_attributes: {},
      opted_in_subscription_types: { url: `/contacts/${String(created.body.id)}/subscriptions` },
    });
    expect(created.body.created_at).toBeGreaterThan(1_700_000_000);
    expect(created.body).not.toHaveProperty('workspace_id'); // a placeholder only the sandbox's code fills
    const first = await call(sim, 'GET', '/contacts?per_page=4', undefined, auth);
    expect((first.body.data as unknown[]).length).toBe(4);
    expect(first.headers.get('x-ratelimit-limit')).toBe('1666');
    // The sidecar's pages rule: newest first, Intercom's cursor form, no `next` on the last page.
    expect((first.body.data as Rec[])[0]?.id).toBe(created.body.id);
    expect(first.body).toMatchObject({
      type: 'list',
      total_count: 6,
      pages: { type: 'pages', page: 1, per_page: 4, total_pages: 2, next: { page: 2, per_page: 4 } },
    });
    const after = ((first.body.pages as Rec).next as Rec).starting_after as string;
    const lastOfFirst = (first.body.data as Rec[])[3] as Rec;
    expect(JSON.parse(Buffer.from(after, 'base64').toString())).toEqual([(lastOfFirst.created_at as number) * 1000, lastOfFirst.id, 2]);
    const second = await call(sim, 'GET', `/contacts?per_page=4&starting_after=${after}`, undefined, auth);
    expect(second.body.data).toHaveLength(2);
    expect(second.body.pages).toEqual({ type: 'pages', page: 2, per_page: 4, total_pages: 2 });
    expect((await call(sim, 'GET', '/contacts?starting_after=bm9wZQ', undefined, auth)).body).toMatchObject({
      errors: [{ code: 'parameter_invalid', message: 'starting_after is invalid' }],
    });

    const bad = await call(sim, 'POST', '/contacts', { email: 42 }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'error.list', errors: [{ code: 'parameter_invalid', message: 'email must be string', field: 'email' }] });
    expect((await call(sim, 'GET', '/contacts/nope', undefined, auth)).body).toMatchObject({ errors: [{ code: 'not_found', message: 'User Not Found' }] });
    expect((await call(sim, 'GET', '/conversations/abc', undefined, auth)).body).toMatchObject({
      errors: [{ code: 'not_found', message: 'Resource Not Found' }],
    });
    expect((await call(sim, 'GET', '/tags', undefined, { ...auth, 'intercom-version': '9.9' })).body).toMatchObject({
      errors: [{ code: 'intercom_version_invalid' }],
    });
    expect((await call(sim, 'GET', '/tags', undefined, { authorization: 'Bearer other' })).body).toMatchObject({
      errors: [{ code: 'unauthorized', message: 'Access Token Invalid' }],
    });
  });

  it('searches with the sidecar’s filter trees: operators by value type, AND/OR nesting, dotted fields, sort, cursor pages', async () => {
    for (const [i, email] of ['zed@one.example', 'amy@two.example', 'bob@one.example'].entries()) {
      expect((await call(sim, 'POST', '/contacts', { role: 'user', email, name: `Searched ${i}`, signed_up_at: 1_700_000_000 + i }, auth)).status).toBe(200);
    }
    const search = (body: unknown) => call(sim, 'POST', '/contacts/search', body, auth);
    const tree = {
      operator: 'AND',
      value: [
        { field: 'name', operator: '^', value: 'searched' },
        {
          operator: 'OR',
          value: [
            { field: 'email', operator: '$', value: 'one.example' },
            { field: 'signed_up_at', operator: '>', value: 1_700_000_000 },
          ],
        },
      ],
    };
    const sorted = await search({ query: tree, sort: { field: 'email', order: 'descending' }, pagination: { per_page: 2 } });
    expect(sorted.status, JSON.stringify(sorted.body)).toBe(200);
    expect((sorted.body.data as Rec[]).map((c) => c.email)).toEqual(['zed@one.example', 'bob@one.example']);
    expect(sorted.body).toMatchObject({ type: 'list', total_count: 3, pages: { type: 'pages', page: 1, per_page: 2, total_pages: 2, next: { page: 2 } } });
    const after = ((sorted.body.pages as Rec).next as Rec).starting_after;
    const last = await search({ query: tree, sort: { field: 'email', order: 'descending' }, pagination: { per_page: 2, starting_after: after } });
    expect((last.body.data as Rec[]).map((c) => c.email)).toEqual(['amy@two.example']);
    expect(last.body.pages).toEqual({ type: 'pages', page: 2, per_page: 2, total_pages: 2 });
    expect(((await search({ query: { field: 'email', operator: 'IN', value: ['amy@two.example', 'x@y.z'] } })).body.data as Rec[]).map((c) => c.email)).toEqual(
      ['amy@two.example'],
    );
    expect((await search({ query: { field: 'location.city', operator: '=', value: 'no such city' } })).body.total_count).toBe(0);
    // A date field takes = < > only; a boolean no ~; a page beyond the largest; a cursor not issued.
    expect((await search({ query: { field: 'signed_up_at', operator: '>=', value: 1 } })).body).toMatchObject({
      errors: [{ code: 'bad_request', message: expect.stringMatching(/date field signed_up_at; use =, <, >/) }],
    });
    expect((await search({ query: { field: 'has_hard_bounced', operator: '~', value: 'x' } })).status).toBe(400);
    expect((await search({ query: { field: 'name', operator: '=', value: 'x' }, pagination: { per_page: 151 } })).status).toBe(400);
    expect((await search({ query: { field: 'name', operator: '=', value: 'x' }, pagination: { starting_after: 'nope' } })).body).toMatchObject({
      errors: [{ code: 'parameter_invalid' }],
    });
  });

  it('pages by number with the sidecar’s pages rule: next links then null, a reversing order value, the cap on offset paging', async () => {
    const list = (q: string) => call(sim, 'POST', `/companies/list?${q}`, undefined, auth);
    const ids = (r: { body: Rec }) => (r.body.data as Rec[]).map((c) => c.id);
    const first = await list('page=1&per_page=2');
    expect(first.body).toMatchObject({
      type: 'list',
      total_count: 5,
      pages: { type: 'pages', page: 1, per_page: 2, total_pages: 3, next: `${sim.url}/companies/list?page=2&per_page=2` },
    });
    const last = await list('page=3&per_page=2');
    expect((last.body.pages as Rec).next).toBeNull();
    expect(ids(last)).toHaveLength(1);
    const all = ids(await list('per_page=5'));
    expect(ids(await list('per_page=5&order=asc'))).toEqual([...all].reverse());
    expect([...ids(first), ...ids(await list('page=2&per_page=2')), ...ids(last)]).toEqual(all);
    expect((await list('page=5001&per_page=2')).body).toMatchObject({
      errors: [{ code: 'bad_request', message: expect.stringMatching(/first 10000 companies/) }],
    });
    expect((await list('page=5000&per_page=2')).status).toBe(200);
  });

  it('scrolls with the sidecar’s scroll rule: one scroll open at a time, the same parameter throughout, ended by an empty page', async () => {
    const scroll = (param?: string) => call(sim, 'GET', `/companies/scroll${param === undefined ? '' : `?scroll_param=${param}`}`, undefined, auth);
    const first = await scroll();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ type: 'list', pages: null, total_count: null, scroll_param: expect.any(String) });
    expect(first.body.data).toHaveLength(5);
    expect((await scroll()).body).toMatchObject({ errors: [{ code: 'bad_request', message: expect.stringMatching(/scroll already exists/) }] });
    const end = await scroll(first.body.scroll_param as string);
    expect(end.body).toMatchObject({ data: [], scroll_param: first.body.scroll_param });
    expect((await scroll(first.body.scroll_param as string)).body).toMatchObject({
      errors: [{ code: 'parameter_invalid', message: expect.stringMatching(/scroll_param is invalid/) }],
    });
    expect((await scroll()).status).toBe(200);
    sim.closeScrolls();
    expect((await scroll()).status).toBe(200);
  });

  it('runs the OAuth flow of the sidecar: a single-use code for a token the API then accepts', async () => {
    const consent = await fetch(`${sim.url}/oauth?client_id=sim_client&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s`, { redirect: 'manual' });
    const code = new URL(consent.headers.get('location') as string).searchParams.get('code') as string;
    const exchange = () =>
      fetch(`${sim.url}/auth/eagle/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'sim_client', client_secret: 'sim_secret', code }),
      });
    const token = (await (await exchange()).json()) as Rec;
    expect(token).toEqual({ token_type: 'Bearer', token: token.access_token, access_token: expect.any(String) });
    expect((await call(sim, 'GET', '/tags', undefined, { authorization: `Bearer ${String(token.access_token)}` })).status).toBe(200);
    const again = await exchange();
    expect(again.status).toBe(400);
    expect(((await again.json()) as Rec).type).toBe('error.list');
  });
});

describe('RPC-style methods declared in the sidecar (test/fixtures/factory/rpc.yaml, in the shapes of Slack’s Web API)', () => {
  let sim: OpenApiSimulator;
  const RPC = new URL('../fixtures/factory/rpc.yaml', import.meta.url).pathname;
  const SIDECAR = new URL('../fixtures/factory/rpc-sidecar.yaml', import.meta.url).pathname;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: RPC, sidecar: SIDECAR, seed: 4 });
  });
  afterAll(() => sim.close());
  const auth = { authorization: 'Bearer tok-1' };
  const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = auth) =>
    fetch(`${sim.url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    }).then(async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as Rec }));
  const boards = () => [...(sim.resources.get('boards')?.records.values() ?? [])];

  it('seeds records from the description’s own success examples, ids shaped like theirs, children under parents', () => {
    expect(boards()).toHaveLength(5);
    expect(boards().map((s) => s.record.name)).toEqual(['roadmap 1', 'launch 2', 'roadmap 3', 'launch 4', 'roadmap 5']);
    for (const s of boards()) expect(s.record.id).toMatch(/^B[A-Z0-9]{8}$/);
    const notes = [...(sim.resources.get('notes')?.records.values() ?? [])];
    expect(notes).toHaveLength(6);
    for (const n of notes) {
      expect(n.record.ts).toMatch(/^\d{10}\.\d{6}$/);
      expect(boards().map((b) => b.record.id)).toContain(n.parents.board);
    }
  });

  it('lists, gets, creates and updates through the declared methods; the id and parent come from the query or the form body', async () => {
    const first = await call(sim, 'GET', '/boards.list?limit=2', undefined, auth);
    expect(first.status).toBe(200);
    expect(first.body.boards).toHaveLength(2);
    const cursor = (first.body.meta as Rec).next_cursor as string;
    expect(cursor).not.toBe('');
    const last = await call(sim, 'GET', `/boards.list?limit=10&cursor=${cursor}`, undefined, auth);
    expect(last.body.boards).toHaveLength(3);
    // last_cursor: the last page says "" where the next cursor would be.
    expect(last.body.meta).toEqual({ next_cursor: '' });

    const created = await form('/boards.create', { name: 'ops', private: 'true' });
    expect(created.body).toMatchObject({ ok: true, board: { name: 'ops' } });
    // A request field the record schema does not declare (private, a create option) is not stored.
    expect('private' in (created.body.board as Rec)).toBe(false);
    const id = (created.body.board as Rec).id as string;
    expect((await call(sim, 'GET', `/boards.info?board=${id}`, undefined, auth)).body).toMatchObject({ ok: true, board: { id, name: 'ops' } });
    // writes: topic is written at topic.value, the rest of topic kept.
    const topic = await form('/boards.setTopic', { board: id, topic: 'Ship it' });
    expect((topic.body.board as Rec).topic).toMatchObject({ value: 'Ship it', set_by: expect.any(String) });

    const board = boards()[0]?.record.id as string;
    const posted = await form('/notes.post', { board, text: 'hello' });
    // The answer repeats the record's id and parent beside it, as declared properties of the response.
    expect(posted.body).toMatchObject({ ok: true, board, note: { text: 'hello' } });
    expect(posted.body.ts).toBe((posted.body.note as Rec).ts);
    const history = await call(sim, 'GET', `/notes.history?board=${board}`, undefined, auth);
    const mine = [...(sim.resources.get('notes')?.records.values() ?? [])].filter((s) => s.parents.board === board).map((s) => s.record.ts);
    expect((history.body.notes as Rec[]).map((n) => n.ts).sort()).toEqual(mine.sort());
    // filters (match: after): oldest keeps the notes after it (compared as numbers).
    const after = await call(sim, 'GET', `/notes.history?board=${board}&oldest=${String(posted.body.ts)}`, undefined, auth);
    expect(after.body.notes).toEqual([]);
  });

  it('answers errors in 200 bodies as the sidecar says; 429 carries Retry-After; a missing token parameter is no error', async () => {
    expect(await call(sim, 'GET', '/boards.info?board=B0NOSUCH00', undefined, auth)).toMatchObject({
      status: 200,
      body: { ok: false, error: 'board_not_found' },
    });
    expect((await call(sim, 'GET', '/boards.list', undefined, {})).body).toEqual({ ok: false, error: 'not_authed' });
    expect((await call(sim, 'GET', '/boards.list', undefined, { authorization: 'Bearer other' })).body).toEqual({ ok: false, error: 'invalid_auth' });
    expect((await form('/notes.post', { board: 'B0NOSUCH00', text: 'x' })).body).toEqual({ ok: false, error: 'board_not_found' });
    expect((await call(sim, 'GET', '/notes.history?board=B0NOSUCH00', undefined, auth)).body).toEqual({ ok: false, error: 'board_not_found' });
    sim.setRateLimit({ limit: 1, window_seconds: 3600 });
    try {
      await call(sim, 'GET', '/boards.list', undefined, auth);
      const limited = await call(sim, 'GET', '/boards.list', undefined, auth);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ ok: false, error: 'ratelimited' });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      sim.setRateLimit(false);
    }
  });

  it('checks form bodies against the description: types coerced, required fields, a JSON body refused', async () => {
    expect((await form('/boards.create', { private: 'true' })).body).toEqual({ ok: false, error: 'invalid_arguments' });
    expect((await form('/boards.create', { name: 'x', private: 'maybe' })).body).toEqual({ ok: false, error: 'invalid_arguments' });
    const json = await fetch(`${sim.url}/boards.create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ ok: false, error: 'invalid_arguments' });
    expect(formDecode('a=1&m[k]=v&e[]=x&e[]=y&i[0][p]=q&a=2')).toEqual({ a: ['1', '2'], m: { k: 'v' }, e: ['x', 'y'], i: [{ p: 'q' }] });
  });

  it('refuses a sidecar whose resources name an operation the description lacks, or an unknown key', async () => {
    await expect(startOpenApiSimulator({ description: RPC, sidecar: { resources: { boards: { list: 'GET /boards.all' } } } })).rejects.toThrow(
      /resources\.boards\.list: the description has no operation GET \/boards\.all/,
    );
    expect(() => parseSidecar('resources: { boards: { list: "GET /boards.list", listz: "x" } }')).toThrow(/listz/);
    expect(() => parseSidecar('resources: { boards: { list: "/boards.list" } }')).toThrow(/pattern/);
  });
});

/**
 * Sidecar keys for APIs shaped like GitHub's, on a small description of our own: no declared
 * security (auth.bearer), items named by two path ids (resources.key), page-number lists of bare
 * arrays (Link headers keeping the query), filters that match all or compare times, timestamps,
 * 422 for invalid bodies (error.status), and a unique id beside the number that names a record.
 */

describe('Jira’s vendored description and sidecar: resources the sidecar shapes, startAt pages, basic tokens', () => {
  const JIRA = new URL('../../connectors/jira/', import.meta.url).pathname;
  let sim: OpenApiSimulator;
  const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`dev@acme.test:${password}`).toString('base64')}` });
  const ok = basic('sim-jira-api-token');
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: `${JIRA}jira-platform-v3.json`, sidecar: `${JIRA}simulator.yaml`, seed: 4 });
  }, 60_000);
  afterAll(() => sim.close());

  it('checks an HTTP basic token by its password (by the user name when the password is empty); a bearer token as it is', async () => {
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, ok)).status).toBe(200);
    // An API key sent as the user name with an empty password (Close's way).
    const asUser = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:`).toString('base64')}` });
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, asUser('sim-jira-api-token'))).status).toBe(200);
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, asUser('dev@acme.test'))).status).toBe(401);
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, asUser(''))).status).toBe(401);
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, { authorization: 'Bearer sim-jira-oauth-token' })).status).toBe(200);
    const refused = await call(sim, 'GET', '/rest/api/3/myself', undefined, basic('wrong'));
    expect(refused.status).toBe(401);
    // Error body keys are templates: no field, no entry in errors.
    expect(refused.body).toEqual({ errorMessages: ['Client must be authenticated to access this resource.'], errors: {} });
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` })).status).toBe(
      401,
    );
  });

  it('a 400 names the field in errors, keyed by it', async () => {
    const r = await call(sim, 'GET', '/rest/api/3/search/jql?maxResults=ten', undefined, ok);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errorMessages: ['maxResults must be integer'], errors: { maxResults: 'maxResults must be integer' } });
  });

  it('lookup: an item path names a record by id or by its own unique key; timestamps: seeded fixed, set on create and update', async () => {
    const projects = [...sim.resources.get('project')!.records.values()].map((s) => s.record);
    expect(new Set(projects.map((p) => p.key)).size).toBe(5);
    const p = projects[2]!;
    expect((await call(sim, 'GET', `/rest/api/3/project/${String(p.key)}`, undefined, ok)).body).toEqual(p);
    expect((await call(sim, 'GET', `/rest/api/3/project/${String(p.id)}`, undefined, ok)).body).toEqual(p);
    const issues = [...sim.resources.get('issue')!.records.values()].map((s) => s.record as Rec & { fields: Rec });
    expect(issues.map((i) => i.fields.updated)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:02:00.000Z',
      '2026-01-01T00:03:00.000Z',
      '2026-01-01T00:04:00.000Z',
    ]);

    // A create answers in its own response schema (CreatedIssue: id, key, self, ...), not the whole record.
    const made = await call(sim, 'POST', '/rest/api/3/issue', { fields: { summary: 'Made', project: { key: 'ENG' } } }, ok);
    expect(made.status).toBe(201);
    expect(Object.keys(made.body).sort()).toEqual(['id', 'key', 'self']);
    const stored = sim.resources.get('issue')!.records.get(String(made.body.id))!.record as Rec & { fields: Rec };
    expect(stored.fields).toMatchObject({ summary: 'Made', project: { key: 'ENG' }, created: expect.stringMatching(/^20\d\d-/) });
    // An update sets the nested fields it names and keeps the others.
    const put = await call(sim, 'PUT', `/rest/api/3/issue/${String(made.body.key)}?returnIssue=true`, { fields: { summary: 'Renamed' } }, ok);
    expect(put.status).toBe(200);
    expect(put.body.fields).toMatchObject({ summary: 'Renamed', project: { key: 'ENG' } });
  });

  it('lists: the sidecar names more list operations (JQL search); a /search path beside the item path lists it', async () => {
    const search = await call(sim, 'GET', '/rest/api/3/search/jql?maxResults=2', undefined, ok);
    expect((search.body.issues as Rec[]).map((i) => i.id)).toEqual([...sim.resources.get('issue')!.records.keys()].slice(0, 2));
    expect(search.body).toMatchObject({ isLast: false, nextPageToken: expect.any(String) });
    const next = await call(sim, 'GET', `/rest/api/3/search/jql?maxResults=2&nextPageToken=${String(search.body.nextPageToken)}`, undefined, ok);
    expect((next.body.issues as Rec[])[0]?.id).toBe([...sim.resources.get('issue')!.records.keys()][2]);

    const page = await call(sim, 'GET', '/rest/api/3/project/search?maxResults=2&startAt=2', undefined, ok);
    // A numeric cursor is echoed: the page's startAt, its size, the total, isLast, and the next page's URL.
    expect(page.body).toMatchObject({ startAt: 2, maxResults: 2, total: 5, isLast: false, nextPage: expect.stringContaining('startAt=4') });
    expect(page.body.values).toHaveLength(2);
    const last = await call(sim, 'GET', '/rest/api/3/project/search?maxResults=2&startAt=4', undefined, ok);
    expect(last.body).toMatchObject({ startAt: 4, total: 5, isLast: true });
    expect(last.body.values).toHaveLength(1);
    expect('nextPage' in last.body).toBe(false);
  });

  it('get by a query parameter (GET /rest/api/3/user?accountId=), listed by /users/search', async () => {
    const users = (await call(sim, 'GET', '/rest/api/3/users/search?maxResults=10', undefined, ok)).body as unknown as Rec[];
    expect(users).toHaveLength(5);
    const u = users[3]!;
    expect((await call(sim, 'GET', `/rest/api/3/user?accountId=${String(u.accountId)}`, undefined, ok)).body).toEqual(u);
    const missing = await call(sim, 'GET', '/rest/api/3/user?accountId=nobody', undefined, ok);
    expect(missing.status).toBe(404);
    expect(missing.body.errorMessages).toEqual(['Specified user does not exist or you do not have required permissions']);
  });

  it('refuses a sidecar that names an operation the description lacks, or an unknown resource key', async () => {
    await expect(
      startOpenApiSimulator({ description: `${JIRA}jira-platform-v3.json`, sidecar: { resources: { issue: { lists: ['GET /rest/api/3/search'] } } } }),
    ).rejects.toThrow(/resources\.issue\.lists names GET \/rest\/api\/3\/search, which is not an operation/);
    expect(() => parseSidecar('resources: { issue: { lookups: [key] } }')).toThrow(/lookups/);
    expect(() => parseSidecar('resources: { user: { get: { operation: "POST /x", id_query: a } } }')).toThrow(/pattern/);
  });

  it('oauth.endpoints: accessible-resources answers a token the flow issued (one site), [] for a consent given with sim_grant=none, 401 to any other token', async () => {
    const RESOURCES = '/oauth/token/accessible-resources';
    const grant = async (extra: string): Promise<string> => {
      const consent = await fetch(`${sim.url}/authorize?client_id=sim_client&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s${extra}`, {
        redirect: 'manual',
      });
      const code = new URL(consent.headers.get('location') as string).searchParams.get('code') as string;
      const res = await fetch(`${sim.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          client_id: 'sim_client',
          client_secret: 'sim_secret',
          code,
          redirect_uri: 'https://app.example/cb',
        }),
      });
      return ((await res.json()) as Rec).access_token as string;
    };
    const site = {
      id: '11223344-a1b2-3b33-c444-def123456789',
      url: 'https://sandbox.atlassian.net',
      name: 'sandbox',
      scopes: ['read:jira-work', 'write:jira-work', 'read:jira-user'],
      avatarUrl: expect.any(String),
    };
    const granted = await grant('');
    expect(await call(sim, 'GET', RESOURCES, undefined, { authorization: `Bearer ${granted}` })).toMatchObject({ status: 200, body: [site] });
    const none = await grant('&sim_grant=none');
    expect(await call(sim, 'GET', RESOURCES, undefined, { authorization: `Bearer ${none}` })).toMatchObject({ status: 200, body: [] });
    // The consent with nothing granted still issued a token the API accepts.
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, { authorization: `Bearer ${none}` })).status).toBe(200);
    expect((await call(sim, 'GET', RESOURCES, undefined, { authorization: 'Bearer not-issued' })).status).toBe(401);
    expect((await call(sim, 'GET', RESOURCES, undefined, ok)).status).toBe(401);
    expect((await call(sim, 'POST', RESOURCES, {}, { authorization: `Bearer ${granted}` })).status).not.toBe(200);
    expect(() => parseSidecar('oauth: { authorize_path: /a, token_path: /t, endpoints: [{ path: x, json: [] }] }')).toThrow(/pattern/);
    expect(() => parseSidecar('oauth: { authorize_path: /a, token_path: /t, endpoints: [{ path: /x }] }')).toThrow(/json/);
  });
});
