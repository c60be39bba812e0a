/**
 * The Intercom simulator on its own, over HTTP: response shapes against the OpenAPI 2.14
 * response schemas, request validation against its request schemas (a body the real API would
 * reject gets a 400 error.list), auth, Intercom-Version, rate limiting, paging, mutations and
 * the OAuth flow.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INTERCOM_DESCRIPTION, startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';

type Rec = Record<string, unknown>;
interface Reply {
  status: number;
  headers: Headers;
  body: Rec;
}

async function call(
  sim: IntercomSimulator,
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'application/json', 'intercom-version': '2.14', ...(options.headers ?? {}) };
  const token = options.token === undefined ? sim.accessToken : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined || options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = options.rawBody ?? JSON.stringify(options.body);
  }
  const res = await fetch(`${sim.url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}), redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? {} : (JSON.parse(text) as Rec) };
}

const get = (sim: IntercomSimulator, path: string): Promise<Reply> => call(sim, 'GET', path);
const post = (sim: IntercomSimulator, path: string, body?: unknown): Promise<Reply> => call(sim, 'POST', path, body === undefined ? {} : { body });
const put = (sim: IntercomSimulator, path: string, body: unknown): Promise<Reply> => call(sim, 'PUT', path, { body });

/** Expect an Intercom error.list with this status and code. */
function expectError(r: Reply, status: number, code: string, message?: string | RegExp): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.type).toBe('error.list');
  expect(r.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  const first = (r.body.errors as Rec[])[0] as Rec;
  expect(first.code).toBe(code);
  if (message !== undefined) expect(first.message).toMatch(message);
}

/** Ids of a resource's records in the simulator's store, in stored order. */
const ids = (sim: IntercomSimulator, resource: string): string[] => [...(sim.resources.get(resource)?.records.keys() ?? [])];
const RESOURCES = ['admins', 'teams', 'tags', 'segments', 'companies', 'contacts', 'conversations', 'notes', 'internal_articles'];
const counts = (sim: IntercomSimulator): Record<string, number> => Object.fromEntries(RESOURCES.map((r) => [r, sim.resources.get(r)?.records.size ?? 0]));

// The 200 response schemas of the vendored description (connectors/intercom/openapi-2.14.json).
function expectMatchesOpenApi(key: string, body: unknown): void {
  const op = INTERCOM_DESCRIPTION.operations.find((o) => o.key === key);
  expect(op?.responseRef, `no response schema for ${key}`).toBeTruthy();
  const problem = INTERCOM_DESCRIPTION.validateValue(op?.responseRef as string, body);
  expect(problem, `${key}: ${problem?.message ?? ''}`).toBeNull();
}

describe('Intercom simulator: seeded workspace', () => {
  let sim: IntercomSimulator;
  beforeAll(async () => {
    sim = await startIntercomSimulator({ seed: 3 });
  });
  afterAll(() => sim.close());

  it('seeds a few hundred related records by default', () => {
    expect(counts(sim)).toEqual({
      admins: 12,
      teams: 5,
      tags: 25,
      segments: 8,
      companies: 60,
      contacts: 300,
      conversations: 150,
      notes: 90,
      internal_articles: 15,
    });
  });

  it('is deterministic per seed', async () => {
    const twin = await startIntercomSimulator({ seed: 3 });
    const other = await startIntercomSimulator({ seed: 4 });
    try {
      const a = await get(sim, '/contacts?per_page=20');
      const b = await get(twin, '/contacts?per_page=20');
      expect(b.body).toEqual(a.body);
      expect((await get(twin, '/conversations/' + ids(sim, 'conversations')[7])).body).toEqual(
        (await get(sim, '/conversations/' + ids(sim, 'conversations')[7])).body,
      );
      expect((await get(other, '/contacts?per_page=20')).body).not.toEqual(a.body);
    } finally {
      await twin.close();
      await other.close();
    }
  });

  it('answers every read with the shape of the OpenAPI 2.14 response schema', async () => {
    const contact = ids(sim, 'contacts')[5] as string;
    const conversation = ids(sim, 'conversations')[3] as string;
    const company = ids(sim, 'companies')[2] as string;
    const reads: [string, string][] = [
      ['GET /me', '/me'],
      ['GET /contacts', '/contacts?per_page=150'],
      ['GET /contacts/{contact_id}', `/contacts/${contact}`],
      ['GET /contacts/{contact_id}/notes', `/contacts/${(sim.records('notes')[0]?.contact as Rec).id}/notes`],
      ['GET /notes/{note_id}', `/notes/${ids(sim, 'notes')[0]}`],
      ['GET /conversations', '/conversations?per_page=150'],
      ['GET /conversations/{conversation_id}', `/conversations/${conversation}`],
      ['GET /companies', '/companies?per_page=60'],
      ['GET /companies/{company_id}', `/companies/${company}`],
      ['GET /teams', '/teams'],
      ['GET /teams/{team_id}', `/teams/${ids(sim, 'teams')[0]}`],
      ['GET /admins', '/admins?display_avatar=true'],
      ['GET /admins/{admin_id}', `/admins/${ids(sim, 'admins')[1]}`],
      ['GET /tags', '/tags'],
      ['GET /tags/{tag_id}', `/tags/${ids(sim, 'tags')[0]}`],
      ['GET /segments', '/segments?include_count=true'],
      ['GET /segments/{segment_id}', `/segments/${ids(sim, 'segments')[0]}`],
      ['GET /internal_articles', '/internal_articles'],
      ['GET /internal_articles/{internal_article_id}', `/internal_articles/${ids(sim, 'internal_articles')[0]}`],
    ];
    for (const [op, path] of reads) {
      const r = await get(sim, path);
      expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
      expectMatchesOpenApi(op, r.body);
    }
    const list = await post(sim, '/companies/list?per_page=60');
    expectMatchesOpenApi('POST /companies/list', list.body);
  });

  it('relates records: conversations name existing contacts, contacts list their companies and notes', async () => {
    const conv = (await get(sim, `/conversations/${ids(sim, 'conversations')[10]}`)).body;
    const ref = ((conv.contacts as Rec).contacts as Rec[])[0] as Rec;
    const contact = await get(sim, `/contacts/${ref.id}`);
    expect(contact.status).toBe(200);
    expect(ref.external_id).toBe(contact.body.external_id);
    const parts = conv.conversation_parts as Rec;
    expect(parts.type).toBe('conversation_part.list');
    expect(parts.total_count).toBe((parts.conversation_parts as unknown[]).length);

    const withCompany = sim.records('contacts').find((c) => ((c.companies as Rec).total_count as number) > 0) as Rec;
    const c = (await get(sim, `/contacts/${withCompany.id as string}`)).body;
    const company = ((c.companies as Rec).data as Rec[])[0] as Rec;
    expect(company).toEqual({ type: 'company', id: expect.stringMatching(/^[0-9a-f]{24}$/), url: `/companies/${company.id as string}` });
    expect(((await get(sim, `/companies/${company.id}`)).body.user_count as number) >= 1).toBe(true);

    const segments = (await get(sim, '/segments?include_count=true')).body.segments as Rec[];
    const count = (name: string): number => segments.find((s) => s.name === name)?.count as number;
    expect(count('All users') + count('All leads')).toBe(300);
    expect((await get(sim, '/segments')).body.segments).toEqual(segments.map(({ count: _c, ...s }) => s));
  });

  it('scales contacts, companies and conversations with size', async () => {
    const big = await startIntercomSimulator({ size: 100_000, rateLimit: false });
    try {
      expect(counts(big)).toMatchObject({ contacts: 100_000, companies: 20_000, conversations: 50_000, notes: 30_000 });
      const page = await get(big, '/contacts?per_page=150');
      expect((page.body.data as unknown[]).length).toBe(150);
      expect(page.body.total_count).toBe(100_000);
      expect(page.body.pages).toMatchObject({ page: 1, per_page: 150, total_pages: 667 });
      // Page-numbered company lists stop at 10,000 companies with a 400 bad_request.
      const listed = big.listedCompanies().length;
      expect(listed).toBeGreaterThan(10_000);
      const last = await post(big, '/companies/list?per_page=60&page=167');
      expect((last.body.data as Rec[]).map((c) => c.id)).toEqual(
        big
          .listedCompanies()
          .slice(9960, 10020)
          .map((c) => c.id),
      );
      expectError(await post(big, '/companies/list?per_page=60&page=168'), 400, 'bad_request', /10000 companies/);
    } finally {
      await big.close();
    }
    await expect(startIntercomSimulator({ size: 100_001 })).rejects.toThrow(RangeError);
  });
});

describe('Intercom simulator: auth, version header, rate limits', () => {
  let sim: IntercomSimulator;
  beforeAll(async () => {
    sim = await startIntercomSimulator();
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.reset();
    sim.setRateLimit({ limit: 1_000_000, window_seconds: 10 });
  });

  it('rejects a missing or unknown bearer token with 401 unauthorized', async () => {
    expectError(await call(sim, 'GET', '/contacts', { token: null }), 401, 'unauthorized', 'Access Token Invalid');
    expectError(await call(sim, 'GET', '/contacts', { token: 'nope' }), 401, 'unauthorized');
    expectError(await call(sim, 'GET', '/contacts', { token: null, headers: { authorization: `Token ${sim.accessToken}` } }), 401, 'unauthorized');
    expect((await get(sim, '/me')).body).toMatchObject({ type: 'admin', app: { type: 'app', id_code: sim.workspaceId } });
  });

  it('accepts the Intercom-Version values of the description and rejects others', async () => {
    expect((await call(sim, 'GET', '/tags', { headers: { 'intercom-version': '2.14' } })).status).toBe(200);
    expect((await call(sim, 'GET', '/tags', { headers: { 'intercom-version': '2.11' } })).status).toBe(200);
    expectError(await call(sim, 'GET', '/tags', { headers: { 'intercom-version': '9.9' } }), 400, 'intercom_version_invalid');
  });

  it('sends X-RateLimit headers on every response, the reset as Unix seconds', async () => {
    sim.setRateLimit({ limit: 100, window_seconds: 10 });
    const a = await get(sim, '/teams');
    const b = await call(sim, 'GET', '/teams', { token: 'bad' });
    for (const r of [a, b]) {
      expect(r.headers.get('x-ratelimit-limit')).toBe('100');
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThan(Date.now() / 1000 - 1);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 10);
    }
    expect(Number(a.headers.get('x-ratelimit-remaining')) - Number(b.headers.get('x-ratelimit-remaining'))).toBe(1);
  });

  it('answers 429 error.list once the window is spent', async () => {
    sim.setRateLimit({ limit: 2, window_seconds: 60 });
    expect((await get(sim, '/teams')).status).toBe(200);
    expect((await get(sim, '/teams')).status).toBe(200);
    const r = await get(sim, '/teams');
    expectError(r, 429, 'rate_limit_exceeded');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    sim.resetRateLimit();
    expect((await get(sim, '/teams')).status).toBe(200);
  });

  it('serves injected faults through the shared sim-server', async () => {
    sim.inject({ path: '/contacts', status: 503, text: '<html>upstream connect error</html>', contentType: 'text/html' });
    const res = await fetch(`${sim.url}/contacts`, { headers: { authorization: `Bearer ${sim.accessToken}` } });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('upstream connect error');
    expect((await get(sim, '/contacts')).status).toBe(200);
  });
});

describe('Intercom simulator: paging', () => {
  let sim: IntercomSimulator;
  beforeAll(async () => {
    sim = await startIntercomSimulator({ seed: 11, size: 230 });
  });
  afterAll(() => sim.close());

  it('pages contacts and conversations with starting_after cursors, newest first', async () => {
    const stored = (resource: string): string[] => [...(sim.resources.get(resource)?.records.keys() ?? [])];
    for (const [path, key, total, perPage] of [
      ['/contacts', 'data', 230, 50],
      ['/conversations', 'conversations', 115, 20],
    ] as const) {
      const ids: string[] = [];
      let after: string | undefined;
      let pageNo = 0;
      for (;;) {
        const r = await get(sim, `${path}${after ? `?starting_after=${encodeURIComponent(after)}` : ''}`);
        expect(r.status).toBe(200);
        pageNo++;
        const pages = r.body.pages as Rec;
        expect(pages).toMatchObject({ type: 'pages', page: pageNo, per_page: perPage, total_pages: Math.ceil(total / perPage) });
        ids.push(...(r.body[key] as Rec[]).map((x) => x.id as string));
        const next = pages.next as Rec | undefined;
        if (next === undefined) break;
        // Intercom's cursor form: base64 of [created_at in ms, last id, next page].
        const decoded = JSON.parse(Buffer.from(next.starting_after as string, 'base64').toString()) as unknown[];
        expect(decoded[1]).toBe(ids[ids.length - 1]);
        expect(decoded[2]).toBe(pageNo + 1);
        expect(next.page).toBe(pageNo + 1);
        after = next.starting_after as string;
      }
      expect(ids.length).toBe(total);
      expect(new Set(ids).size).toBe(total);
      expect(ids).toEqual(stored(path.slice(1)).reverse());
    }
  });

  it('rejects a starting_after it did not issue', async () => {
    expectError(await get(sim, '/contacts?starting_after=not-a-cursor'), 400, 'parameter_invalid');
  });

  it('pages companies by number, with next links and null on the last page', async () => {
    const seen: string[] = [];
    let page = 1;
    for (;;) {
      const r = await post(sim, `/companies/list?page=${page}&per_page=20`);
      const pages = r.body.pages as Rec;
      expect(pages).toMatchObject({ type: 'pages', page, per_page: 20 });
      seen.push(...(r.body.data as Rec[]).map((c) => c.id as string));
      if (pages.next === null) break;
      expect(pages.next).toBe(`${sim.url}/companies/list?page=${page + 1}&per_page=20`);
      page++;
    }
    const listed = sim.listedCompanies().map((c) => c.id);
    expect(seen).toEqual(listed);
    const lastRequest = await Promise.all(seen.slice(0, 5).map(async (id) => (await get(sim, `/companies/${id}`)).body.last_request_at as number | undefined));
    expect(lastRequest).toEqual([...lastRequest].sort((a, b) => (b ?? 0) - (a ?? 0)));
    const asc = await post(sim, '/companies/list?per_page=60&order=asc');
    expect((asc.body.data as Rec[]).map((c) => c.id)).toEqual([...listed].reverse().slice(0, 60));
    // per_page above 60 and unknown orders are refused (listAllCompanies, 2.17 reference).
    expectError(await post(sim, '/companies/list?per_page=61'), 400, 'parameter_invalid', /per_page/);
    expectError(await post(sim, '/companies/list?order=newest'), 400, 'parameter_invalid', /order/);
  });
});

describe('Intercom simulator: request validation against the OpenAPI schemas', () => {
  let sim: IntercomSimulator;
  beforeAll(async () => {
    sim = await startIntercomSimulator();
  });
  afterAll(() => sim.close());
  const contactId = (): string => ids(sim, 'contacts')[0] as string;

  it('rejects bodies the schemas reject with a 400 error.list', async () => {
    // POST /contacts needs one of email, external_id or role (anyOf).
    expectError(await post(sim, '/contacts', { name: 'No Identifier' }), 400, 'parameter_not_found', /is a required parameter/);
    expectError(await post(sim, '/contacts', { email: 42 }), 400, 'parameter_invalid', /email must be string/);
    expectError(await post(sim, '/contacts', { role: 'user', signed_up_at: '2024-01-01' }), 400, 'parameter_invalid', /signed_up_at/);
    expectError(
      await put(sim, `/contacts/${contactId()}`, { unsubscribed_from_emails: 'yes' }),
      400,
      'parameter_invalid',
      /unsubscribed_from_emails must be boolean/,
    );
    // The description's own 400 example for POST /companies: body {test: invalid}.
    expectError(await post(sim, '/companies', { test: 'invalid' }), 400, 'bad_request', "bad 'test' parameter");
    expectError(await post(sim, '/companies', { company_id: 'c1', size: '100' }), 400, 'parameter_invalid', /size must be integer/);
    expectError(await put(sim, `/companies/${ids(sim, 'companies')[0]}`, { name: 7 }), 400, 'parameter_invalid');
    // ...and for POST /tags: "invalid tag parameters".
    expectError(await post(sim, '/tags', { test: 'invalid' }), 400, 'parameter_invalid', 'invalid tag parameters');
    expectError(await post(sim, '/internal_articles', { title: 'T', owner_id: 1 }), 400, 'parameter_not_found', /author_id/);
    expectError(await post(sim, '/internal_articles', { title: 'T', owner_id: '1', author_id: 1 }), 400, 'parameter_invalid', /owner_id must be integer/);
    expectError(await post(sim, `/contacts/${contactId()}/notes`, {}), 400, 'parameter_not_found', /body is a required parameter/);
    expectError(await call(sim, 'POST', '/contacts', { rawBody: '{"email": ' }), 400, 'parameter_invalid', /JSON/);
  });

  it('rejects query params the schemas reject', async () => {
    expectError(await get(sim, '/conversations?per_page=151'), 400, 'parameter_invalid', /per_page/);
    expectError(await get(sim, '/contacts?per_page=abc'), 400, 'parameter_invalid', /per_page must be integer/);
    expectError(await get(sim, '/segments?include_count=maybe'), 400, 'parameter_invalid', /include_count must be boolean/);
    expectError(await post(sim, '/companies/list?page=two'), 400, 'parameter_invalid', /page must be integer/);
    expect((await get(sim, '/contacts?per_page=150')).status).toBe(200);
  });

  it('accepts what the description documents as accepted despite its schema', async () => {
    // monthly_spend: "this will truncate floats ... 155.98 will be truncated to 155".
    const company = await post(sim, '/companies', {
      company_id: 'float-spend',
      monthly_spend: 155.98,
      custom_attributes: { paid_subscriber: true, team_mates: 9 },
    });
    expect(company.status).toBe(200);
    expect(company.body).toMatchObject({ monthly_spend: 155, custom_attributes: { paid_subscriber: true, team_mates: 9 } });
    // createNote's request examples send admin_id as a number.
    const note = await post(sim, `/contacts/${contactId()}/notes`, { body: 'Hello', admin_id: Number(ids(sim, 'admins')[2]) });
    expect(note.status).toBe(200);
    expect(note.body).toMatchObject({ type: 'note', body: '<p>Hello</p>', author: { type: 'admin', id: ids(sim, 'admins')[2] } });
  });

  it('answers 404 error.list for unknown and malformed ids, with the codes of the description', async () => {
    expectError(await get(sim, '/contacts/000000000000000000000000'), 404, 'not_found', 'User Not Found');
    expectError(await put(sim, '/contacts/nope', { name: 'x' }), 404, 'not_found', 'User Not Found');
    expectError(await get(sim, '/conversations/not-a-number'), 404, 'not_found', 'Resource Not Found');
    expectError(await get(sim, '/conversations/1'), 404, 'not_found');
    expectError(await get(sim, '/companies/nope'), 404, 'company_not_found', 'Company Not Found');
    expectError(await get(sim, '/companies?company_id=nope'), 404, 'company_not_found');
    expectError(await get(sim, '/admins/1'), 404, 'admin_not_found', 'Admin not found');
    expectError(await get(sim, '/teams/1'), 404, 'team_not_found', 'Team not found');
    expectError(await get(sim, '/tags/999999'), 404, 'not_found');
    expectError(await get(sim, '/segments/nope'), 404, 'not_found');
    expectError(await get(sim, '/internal_articles/5'), 404, 'not_found');
    expectError(await post(sim, '/contacts/nope/notes', { body: 'x' }), 404, 'not_found', 'User Not Found');
    expectError(await post(sim, `/contacts/${contactId()}/notes`, { body: 'x', admin_id: '1' }), 404, 'not_found', 'Resource Not Found');
    expectError(await get(sim, '/no/such/path'), 404, 'not_found');
  });
});

describe('Intercom simulator: writes', () => {
  let sim: IntercomSimulator;
  beforeAll(async () => {
    sim = await startIntercomSimulator();
  });
  afterAll(() => sim.close());

  it('creates and updates contacts; a following get and list see the change', async () => {
    const created = await post(sim, '/contacts', {
      role: 'lead',
      email: 'Ada@Example.com',
      name: 'Ada',
      avatar: 'https://example.com/ada.png',
      custom_attributes: { lead_source: 'webinar' },
    });
    expect(created.status).toBe(200);
    expectMatchesOpenApi('POST /contacts', created.body);
    const id = created.body.id as string;
    expect(created.body).toMatchObject({
      type: 'contact',
      role: 'lead',
      email: 'Ada@Example.com',
      avatar: { type: 'avatar', image_url: 'https://example.com/ada.png' },
      custom_attributes: { lead_source: 'webinar' },
    });
    expect((await get(sim, `/contacts/${id}`)).body).toEqual(created.body);
    expect(((await get(sim, '/contacts?per_page=1')).body.data as Rec[])[0]?.id).toBe(id);

    const updated = await put(sim, `/contacts/${id}`, { role: 'user', external_id: 'ada-1', custom_attributes: { plan_tier: 'pro' } });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ role: 'user', external_id: 'ada-1', name: 'Ada', custom_attributes: { lead_source: 'webinar', plan_tier: 'pro' } });
    expect((await get(sim, `/contacts/${id}`)).body).toEqual(updated.body);

    // Intercom's 409 for a duplicate, and unknown custom attributes.
    expectError(
      await post(sim, '/contacts', { role: 'user', email: 'ada@example.com' }),
      409,
      'conflict',
      `A contact matching those details already exists with id=${id}`,
    );
    expectError(await post(sim, '/contacts', { role: 'user', external_id: 'ada-1' }), 409, 'conflict');
    expectError(
      await post(sim, '/contacts', { role: 'user', custom_attributes: { shoe_size: 44 } }),
      400,
      'parameter_invalid',
      "Custom attribute 'shoe_size' does not exist",
    );
    expectError(await post(sim, '/contacts', { role: 'admin' }), 400, 'parameter_invalid', /role/);
  });

  it('counts segment members as the contacts are now', async () => {
    const counts = async (): Promise<Record<string, number>> =>
      Object.fromEntries(((await get(sim, '/segments?include_count=true')).body.segments as Rec[]).map((s) => [s.name, s.count]));
    const before = await counts();
    const lead = sim.records('contacts').find((c) => c.role === 'lead') as Rec;
    expect((await put(sim, `/contacts/${lead.id as string}`, { role: 'user' })).status).toBe(200);
    const after = await counts();
    expect([(after['All users'] as number) - (before['All users'] as number), (after['All leads'] as number) - (before['All leads'] as number)]).toEqual([
      1, -1,
    ]);
  });

  it('creates or updates companies by company_id', async () => {
    const a = await post(sim, '/companies', { company_id: 'acme-1', name: 'Acme', plan: 'Pro', size: 40 });
    expectMatchesOpenApi('POST /companies', a.body);
    expect(a.body).toMatchObject({ company_id: 'acme-1', name: 'Acme', plan: { type: 'plan', name: 'Pro' }, size: 40, user_count: 0 });
    const b = await post(sim, '/companies', { company_id: 'acme-1', industry: 'Software', custom_attributes: { region: 'EMEA' } });
    expect(b.body.id).toBe(a.body.id);
    expect(b.body).toMatchObject({ name: 'Acme', size: 40, industry: 'Software', custom_attributes: { region: 'EMEA' } });
    const c = await put(sim, `/companies/${a.body.id}`, { website: 'https://acme.example', monthly_spend: 99.9 });
    expect(c.body).toMatchObject({ website: 'https://acme.example', monthly_spend: 99, industry: 'Software' });
    expect((await get(sim, `/companies/${a.body.id}`)).body).toEqual(c.body);
    expect(((await get(sim, '/companies?company_id=acme-1')).body.data as Rec[])[0]).toEqual(c.body);
    // "The API does not include companies who have no associated users in list responses."
    const listed = (await post(sim, '/companies/list?per_page=60&page=1')).body;
    expect(listed.total_count).toBe(60);
  });

  it('creates or updates tags by name, and tags companies and contacts', async () => {
    const t = await post(sim, '/tags', { name: 'Renewal Q4' });
    expect(t.body).toEqual({ type: 'tag', id: expect.any(String), name: 'Renewal Q4' });
    expect((await post(sim, '/tags', { name: 'renewal q4' })).body.id).toBe(t.body.id);
    const renamed = await post(sim, '/tags', { name: 'Renewal 2026-Q4', id: t.body.id });
    expect(renamed.body).toEqual({ type: 'tag', id: t.body.id, name: 'Renewal 2026-Q4' });
    expect((await get(sim, `/tags/${t.body.id}`)).body).toEqual(renamed.body);
    expect((await get(sim, '/tags')).body.data).toContainEqual(renamed.body);

    const company = ids(sim, 'companies')[0] as string;
    expect((await post(sim, '/tags', { name: 'Renewal 2026-Q4', companies: [{ id: company }] })).status).toBe(200);
    expect(((await get(sim, `/companies/${company}`)).body.tags as Rec).tags).toContainEqual(renamed.body);
    expectError(await post(sim, '/tags', { name: 'x', companies: [{ company_id: 'missing' }] }), 404, 'company_not_found');
    const contact = ids(sim, 'contacts')[1] as string;
    await post(sim, '/tags', { name: 'Renewal 2026-Q4', users: [{ id: contact }] });
    expect(((await get(sim, `/contacts/${contact}`)).body.tags as Rec).data).toContainEqual({ type: 'tag', id: t.body.id, url: `/tags/${t.body.id}` });
    expectError(await post(sim, '/tags', { name: 'x', id: '424242' }), 404, 'tag_not_found');
  });

  it('creates notes on contacts and internal articles', async () => {
    const contact = ids(sim, 'contacts')[2] as string;
    const note = await post(sim, `/contacts/${contact}/notes`, { body: '<p>Called about <b>renewal</b></p>' });
    expectMatchesOpenApi('POST /contacts/{contact_id}/notes', note.body);
    expect(note.body).toMatchObject({
      type: 'note',
      body: '<p>Called about <b>renewal</b></p>',
      contact: { type: 'contact', id: contact },
      author: { type: 'admin', id: ids(sim, 'admins')[0] },
    });
    expect((await get(sim, `/notes/${note.body.id}`)).body).toEqual(note.body);
    expect(((await get(sim, `/contacts/${contact}/notes`)).body.data as Rec[])[0]).toEqual(note.body);
    expect(((await get(sim, `/contacts/${contact}`)).body.notes as Rec).data).toContainEqual({ type: 'note', id: note.body.id, url: `/notes/${note.body.id}` });

    const admin = Number(ids(sim, 'admins')[3]);
    const article = await post(sim, '/internal_articles', { title: 'Refund policy', body: '<p>Up to 30 days.</p>', owner_id: admin, author_id: admin });
    expectMatchesOpenApi('POST /internal_articles', article.body);
    expect(article.body).toMatchObject({
      type: 'internal_article',
      title: 'Refund policy',
      body: '<p>Up to 30 days.</p>',
      owner_id: admin,
      author_id: admin,
      locale: 'en',
    });
    expect((await get(sim, `/internal_articles/${article.body.id}`)).body).toEqual(article.body);
  });
});

describe('Intercom simulator: OAuth', () => {
  let sim: IntercomSimulator;
  beforeAll(async () => {
    sim = await startIntercomSimulator({ oauth: { clientId: 'cid', clientSecret: 'csecret' } });
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.oauth.deny = false;
  });

  const authorize = async (query: string): Promise<URL> => {
    const res = await fetch(`${sim.url}/oauth?${query}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location') as string);
  };
  const exchange = (body: Record<string, string>, form = true): Promise<Response> =>
    fetch(`${sim.url}/auth/eagle/token`, {
      method: 'POST',
      headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
      body: form ? new URLSearchParams(body).toString() : JSON.stringify(body),
    });

  it('redirects with a code that /auth/eagle/token exchanges for a working, non-expiring token', async () => {
    const back = await authorize('client_id=cid&redirect_uri=https%3A%2F%2Fapp.example%2Fcb%3Fx%3D1&state=s123');
    expect(back.origin + back.pathname).toBe('https://app.example/cb');
    expect(back.searchParams.get('x')).toBe('1');
    expect(back.searchParams.get('state')).toBe('s123');
    const code = back.searchParams.get('code') as string;
    expect(code).toMatch(/^[0-9a-f]{32}$/);

    const res = await exchange({ client_id: 'cid', client_secret: 'csecret', code });
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Rec;
    expect(tokens).toEqual({ token_type: 'Bearer', token: expect.any(String), access_token: tokens.token });
    expect(tokens).not.toHaveProperty('refresh_token');
    expect(tokens).not.toHaveProperty('expires_in');
    expect((await call(sim, 'GET', '/me', { token: tokens.access_token as string })).status).toBe(200);

    // Codes are single-use.
    const again = await exchange({ client_id: 'cid', client_secret: 'csecret', code });
    expectError({ status: again.status, headers: again.headers, body: (await again.json()) as Rec }, 400, 'parameter_invalid');
  });

  it('takes a JSON body too, and rejects a wrong client secret or code', async () => {
    const code = (await authorize('client_id=cid&redirect_uri=http://localhost:9/cb')).searchParams.get('code') as string;
    const bad = await exchange({ client_id: 'cid', client_secret: 'wrong', code }, false);
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as Rec).type).toBe('error.list');
    expect((await exchange({ client_id: 'cid', client_secret: 'csecret', code: 'nope' }, false)).status).toBe(400);
    expect((await exchange({ client_id: 'cid', client_secret: 'csecret', code }, false)).status).toBe(200);
  });

  it('redirects with error=access_denied when consent is refused', async () => {
    const viaFlag = await authorize('client_id=cid&redirect_uri=https://app.example/cb&state=abc&sim_deny=1');
    expect(Object.fromEntries(viaFlag.searchParams)).toEqual({ error: 'access_denied', state: 'abc' });
    sim.oauth.deny = true;
    const viaSetting = await authorize('client_id=cid&redirect_uri=https://app.example/cb&state=def');
    expect(Object.fromEntries(viaSetting.searchParams)).toEqual({ error: 'access_denied', state: 'def' });
  });

  it('refuses an unknown client or a missing redirect_uri', async () => {
    expect((await fetch(`${sim.url}/oauth?client_id=other&redirect_uri=https://app.example/cb`, { redirect: 'manual' })).status).toBe(400);
    expect((await fetch(`${sim.url}/oauth?client_id=cid`, { redirect: 'manual' })).status).toBe(400);
  });
});
