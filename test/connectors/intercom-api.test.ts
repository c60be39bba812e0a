/**
 * The Intercom connector end to end (see intercom.test.ts): conversations, companies, teams, admins,
 * tags, segments, notes, articles, sync and search settings, requests, auth, rate limits and faults.
 */
import { describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { ConnectorRuntime, type ListEnvelope } from '../../src/index.ts';
import { type OAuth2Auth } from '../../src/manifest/index.ts';
import { projectDocument, searchDefOf } from '../../src/search/index.ts';
import { failure } from '../helpers/errors.ts';
import {
  all,
  asConversation,
  expectValid,
  ids,
  intercom,
  list,
  manifest,
  one,
  sent,
  sim,
  size,
  stored,
  useIntercomSimulator,
  type Rec,
} from './intercom-helpers.ts';

useIntercomSimulator();

describe('intercom conversations', () => {
  it('list: seeded conversations without parts; every page through starting_after', async () => {
    const page = await list('conversations', { per_page: 3 });
    expectValid('conversations', page.data);
    expect(page.data).toEqual(
      stored('conversations')
        .slice(-3)
        .reverse()
        .map(({ conversation_parts: _parts, ...r }: Rec) => asConversation(r)),
    );
    expect(page.data[0]).not.toHaveProperty('conversation_parts');
    const records = await all('conversations', { per_page: 40 });
    expectValid('conversations', records);
    expect(records.map((c) => c.id)).toEqual(ids('conversations').reverse());
    expect(sent('/conversations').length).toBe(1 + Math.ceil(size('conversations') / 40));
  });

  it('get: one conversation with its parts; unknown id is upstream_not_found', async () => {
    const row = stored('conversations')[42] as Rec;
    const got = await one('conversations', 'get', { id: row.id as string });
    expectValid('conversations', [got.data]);
    expect(got.data).toEqual(asConversation(row));
    expect((got.data.conversation_parts as Rec).type).toBe('conversation_part.list');
    const err = await failure(one('conversations', 'get', { id: '1' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.details.upstream_body).toMatchObject({ type: 'error.list', errors: [{ code: 'not_found', message: 'Resource Not Found' }] });
  });
});

describe('intercom companies', () => {
  it('list: page numbers behind an opaque next_page cursor, through every page', async () => {
    const page = await list('companies', { per_page: 7 });
    expectValid('companies', page.data);
    const listed = sim.listedCompanies();
    expect(page.data).toEqual(listed.slice(0, 7));
    expect(typeof page.meta.next_page).toBe('string');
    const second = await list('companies', { per_page: 7, starting_after: page.meta.next_page as string });
    expect(second.data.map((c) => c.id)).toEqual(listed.slice(7, 14).map((r) => r.id));
    expect(sent('/companies/list').map((r) => [r.method, r.query.get('page'), r.query.get('per_page')])).toEqual([
      ['POST', null, '7'],
      ['POST', '2', '7'],
    ]);

    sim.reset();
    const records = await all('companies', { per_page: 7 });
    expectValid('companies', records);
    expect(records.map((c) => c.id)).toEqual(listed.map((r) => r.id));
    expect(sent('/companies/list')).toHaveLength(Math.ceil(listed.length / 7));
    const last = await list('companies', { per_page: 60 });
    expect(last.meta).toEqual({ next_page: null });
  });

  it('get: one company; unknown id surfaces company_not_found', async () => {
    const row = stored('companies')[4] as Rec;
    const got = await one('companies', 'get', { id: row.id as string });
    expectValid('companies', [got.data]);
    expect(got.data).toEqual(row);
    const err = await failure(one('companies', 'get', { id: 'nope' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.message).toBe('intercom: Company Not Found');
    expect(err.details.upstream_body).toMatchObject({ errors: [{ code: 'company_not_found' }] });
  });

  it('create creates, or updates the company with the same company_id; get sees it', async () => {
    const a = await one('companies', 'create', {
      company_id: 'globex-7',
      name: 'Globex',
      plan: 'Enterprise',
      monthly_spend: 2500.75,
      size: 350,
      website: 'https://globex.example',
      industry: 'Manufacturing',
      custom_attributes: { region: 'NA' },
    });
    expectValid('companies', [a.data]);
    expect(a.data).toMatchObject({
      company_id: 'globex-7',
      name: 'Globex',
      plan: { type: 'plan', name: 'Enterprise' },
      monthly_spend: 2500,
      size: 350,
      website: 'https://globex.example',
      industry: 'Manufacturing',
      custom_attributes: { region: 'NA' },
    });
    const b = await one('companies', 'create', { company_id: 'globex-7', size: 400 });
    expect(b.data.id).toBe(a.data.id);
    expect(b.data).toMatchObject({ name: 'Globex', size: 400 });
    expect((await one('companies', 'get', { id: a.data.id as string })).data).toEqual(b.data);
    expect(stored('companies').filter((c) => c.company_id === 'globex-7')).toHaveLength(1);
  });

  it('update then get', async () => {
    const id = ids('companies')[9] as string;
    const updated = await one('companies', 'update', { id, name: 'Renamed Ltd', industry: 'Media', custom_attributes: { account_tier: 'Tier 1' } });
    expectValid('companies', [updated.data]);
    expect(updated.data).toMatchObject({ id, name: 'Renamed Ltd', industry: 'Media', custom_attributes: { account_tier: 'Tier 1' } });
    expect((await one('companies', 'get', { id })).data).toEqual(updated.data);
    expect((await failure(one('companies', 'update', { id: 'nope', name: 'x' }))).code).toBe('upstream_not_found');
  });
});

describe('intercom teams, admins, tags, segments', () => {
  it('teams: list every team as seeded, get one', async () => {
    const page = await list('teams');
    expectValid('teams', page.data);
    expect(page.data).toEqual(stored('teams'));
    expect(page.meta).toEqual({ next_page: null });
    expect(await all('teams')).toHaveLength(size('teams'));
    const got = await one('teams', 'get', { id: ids('teams')[2] as string });
    expectValid('teams', [got.data]);
    expect(got.data.name).toBe(stored('teams')[2]?.name);
    expect((await failure(one('teams', 'get', { id: '1' }))).details.upstream_body).toMatchObject({ errors: [{ code: 'team_not_found' }] });
  });

  it('admins: list every admin as seeded, get one', async () => {
    const page = await list('admins');
    expectValid('admins', page.data);
    expect(page.data).toEqual(stored('admins'));
    const admin = stored('admins')[4] as Rec;
    const got = await one('admins', 'get', { id: admin.id as string });
    expectValid('admins', [got.data]);
    expect(got.data).toMatchObject({ id: admin.id, name: admin.name, email: admin.email, team_ids: admin.team_ids });
    const err = await failure(one('admins', 'get', { id: 'abc' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.message).toBe('intercom: Admin not found');
  });

  it('tags: list, create-or-update by name, get', async () => {
    const page = await list('tags');
    expectValid('tags', page.data);
    expect(page.data).toEqual(stored('tags'));
    const created = await one('tags', 'create', { name: 'Expansion' });
    expectValid('tags', [created.data]);
    expect(created.data).toEqual({ type: 'tag', id: expect.any(String), name: 'Expansion' });
    expect((await one('tags', 'create', { name: 'EXPANSION' })).data.id).toBe(created.data.id);
    expect((await one('tags', 'create', { name: 'VIP' })).data.id).toBe(ids('tags')[0]);
    expect((await one('tags', 'get', { id: created.data.id as string })).data).toEqual(created.data);
    expect((await list('tags')).data).toContainEqual(created.data);
    expect((await failure(one('tags', 'get', { id: '999999' }))).code).toBe('upstream_not_found');
  });

  it('segments: list with and without counts, get', async () => {
    const plain = await list('segments');
    expectValid('segments', plain.data);
    expect(plain.data[0]).not.toHaveProperty('count');
    const counted = await list('segments', { include_count: true });
    expectValid('segments', counted.data);
    expect(counted.data).toEqual(stored('segments').map((s) => ({ ...s, count: expect.any(Number) })));
    const count = (name: string): number => counted.data.find((s) => s.name === name)?.count as number;
    expect(count('All users') + count('All leads')).toBe(size('contacts'));
    expect(sent('/segments').at(-1)?.query.get('include_count')).toBe('true');
    const got = await one('segments', 'get', { id: ids('segments')[1] as string });
    expectValid('segments', [got.data]);
    expect(got.data).toMatchObject({ name: 'All leads', person_type: 'contact' });
    expect((await failure(one('segments', 'get', { id: 'nope' }))).code).toBe('upstream_not_found');
  });
});

describe('intercom notes and internal articles', () => {
  it('notes create: on the contact, visible on it afterwards', async () => {
    const contact = ids('contacts')[7] as string;
    const admin = ids('admins')[5] as string;
    const note = await one('notes', 'create', { contact_id: contact, body: 'Asked about the Enterprise plan.', admin_id: admin });
    expectValid('notes', [note.data]);
    expect(note.data).toMatchObject({
      type: 'note',
      body: '<p>Asked about the Enterprise plan.</p>',
      contact: { type: 'contact', id: contact },
      author: { type: 'admin', id: admin },
    });
    expect(sent(`/contacts/${contact}/notes`).at(-1)?.method).toBe('POST');
    const onContact = ((await one('contacts', 'get', { id: contact })).data.notes as Rec).data as Rec[];
    expect(onContact).toContainEqual({ type: 'note', id: note.data.id, url: `/notes/${note.data.id}` });
    const err = await failure(one('notes', 'create', { contact_id: '5f0000000000000000000000', body: 'x' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.details.upstream_body).toMatchObject({ errors: [{ message: 'User Not Found' }] });
  });

  it('internal_articles create: stored and readable', async () => {
    const admin = Number(ids('admins')[1]);
    const article = await one('internal_articles', 'create', {
      title: 'Escalating to engineering',
      owner_id: admin,
      author_id: admin,
      body: '<p>Use the #eng-escalations channel.</p>',
    });
    expectValid('internal_articles', [article.data]);
    expect(article.data).toMatchObject({
      title: 'Escalating to engineering',
      owner_id: admin,
      author_id: admin,
      body: '<p>Use the #eng-escalations channel.</p>',
      locale: 'en',
    });
    expect(sim.resources.get('internal_articles')?.records.get(article.data.id as string)?.record.title).toBe('Escalating to engineering');
    const res = await fetch(`${sim.url}/internal_articles/${article.data.id}`, { headers: { authorization: `Bearer ${sim.accessToken}` } });
    expect(await res.json()).toEqual(article.data);
    expect((await failure(one('internal_articles', 'create', { title: 'No owner', author_id: admin }))).code).toBe('invalid_params');
  });
});

describe('intercom sync and search settings', () => {
  it('syncs every list entity (full refresh detects deletions), with the largest page sizes; contacts and conversations incrementally by search, companies by scroll', () => {
    const syncs = Object.fromEntries([...manifest.entities].filter(([, e]) => e.def.sync !== undefined).map(([name, e]) => [name, e.def.sync]));
    expect(Object.keys(syncs).sort()).toEqual(['admins', 'companies', 'contacts', 'conversations', 'segments', 'tags', 'teams']);
    for (const [name, sync] of Object.entries(syncs)) expect(sync).toMatchObject({ action: name === 'companies' ? 'scroll' : 'list', deletes: 'full_refresh' });
    expect(syncs.contacts?.params).toEqual({ per_page: 150 });
    expect(syncs.conversations?.params).toEqual({ per_page: 150 });
    for (const e of ['contacts', 'conversations']) {
      expect(syncs[e]?.incremental, e).toEqual({
        action: 'changes',
        param: 'updated_since',
        cursor_field: 'updated_at',
        format: 'unix_seconds',
        params: { per_page: 150 },
      });
    }
    expect(syncs.segments?.params).toEqual({ include_count: true });
  });

  it('search documents read every field from synced records with its search type', async () => {
    const docs = async (entity: string, params?: Rec) => {
      const def = searchDefOf(manifest.entities.get(entity)?.def as never);
      expect(def, entity).toBeDefined();
      return (await all(entity, params)).map((r) => ({ record: r, doc: projectDocument(r, def as never) }));
    };
    const contacts = await docs('contacts', { per_page: 150 });
    const withAvatar = contacts.find((c) => c.record.avatar !== null) as { record: Rec; doc: Rec };
    expect(withAvatar.doc.avatar).toBe(withAvatar.record.avatar);
    expect(withAvatar.record.avatar).toMatch(/^https?:\/\//);
    const android = contacts.find((c) => c.record.android_last_seen_at !== null) as { record: Rec; doc: Rec };
    expect(android.doc.android_last_seen_at).toBe(String(android.record.android_last_seen_at));
    expect(contacts.every((c) => typeof c.doc.opted_in_subscription_types === 'object' && c.doc.sms_consent === null)).toBe(true);

    const conversations = await docs('conversations', { per_page: 150 });
    for (const { record, doc } of conversations) {
      expect(doc.conversation_message).toEqual(record.source);
      expect(doc.customers).toEqual((record.contacts as Rec).contacts);
      expect(doc.user).toEqual(((record.contacts as Rec).contacts as Rec[])[0]);
      expect(doc.sent_at).toBe(record.created_at);
      expect(doc.redacted).toBe(false);
      // A string in the record (the spec's type), an integer in search (the spec's search type).
      expect(doc.team_assignee_id).toBe(record.team_assignee_id === null ? null : Number(record.team_assignee_id));
    }
    const teams = await docs('teams');
    expect(teams[0]?.doc).toEqual({ admin_ids: teams[0]?.record.admin_ids, id: teams[0]?.record.id, name: teams[0]?.record.name, type: 'team' });
    const companies = await docs('companies', { per_page: 60 });
    expect(companies.every(({ record, doc }) => doc.monthly_spend === record.monthly_spend && doc.user_count === record.user_count)).toBe(true);
  });
});

// ---------------------------------------------------------------- HTTP behaviour

describe('intercom requests, auth, rate limits and faults', () => {
  it('sends the bearer token, Intercom-Version 2.14 and Accept on every request', async () => {
    await list('teams');
    await one('tags', 'create', { name: 'Header check' });
    for (const r of sent()) {
      expect(r.headers.authorization).toBe(`Bearer ${sim.accessToken}`);
      expect(r.headers['intercom-version']).toBe('2.14');
      expect(r.headers.accept).toBe('application/json');
    }
    expect(sent('/tags').at(-1)?.headers['content-type']).toBe('application/json');
  });

  it("a rejected token is upstream_credentials_rejected with Intercom's message", async () => {
    const err = await failure(intercom('revoked').execute('teams', 'list'));
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toBe('intercom: Access Token Invalid');
    expect(err.details).toMatchObject({ upstream_status: 401, upstream_body: { type: 'error.list', errors: [{ code: 'unauthorized' }] } });
  });

  it('the oauth variant: consent URL and code exchange (src/auth) against the simulated flow, then API calls', async () => {
    const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
    const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 'st-1',
      authorizeUrl: onSim(variant.authorize_url),
    });
    const redirect = await fetch(consent, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const back = new URL(redirect.headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe('st-1');
    const client = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb');
    // Intercom tokens neither refresh nor expire.
    expect(Object.keys(tokens)).toEqual(['access_token']);

    const rt = new ConnectorRuntime(manifest, { access_token: tokens.access_token }, { baseUrl: sim.url, authVariant: 'oauth' });
    expect(rt.authVariant).toBe('oauth');
    const page = (await rt.execute('admins', 'list')) as ListEnvelope;
    expect(page.data).toHaveLength(size('admins'));
    expect(sent('/admins').at(-1)?.headers.authorization).toBe(`Bearer ${tokens.access_token}`);

    // A refused consent comes back as error=access_denied; a reused code is refused.
    sim.oauth.deny = true;
    try {
      const denied = new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location') as string);
      expect(denied.searchParams.get('error')).toBe('access_denied');
    } finally {
      sim.oauth.deny = false;
    }
    await expect(exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb')).rejects.toMatchObject({
      code: 'upstream_credentials_rejected',
    });
  });

  it('waits out a 429 until X-RateLimit-Reset and retries', async () => {
    sim.setRateLimit({ limit: 1, window_seconds: 1 });
    const rt = new ConnectorRuntime(manifest, { access_token: sim.accessToken }, { baseUrl: sim.url, limiter: null });
    await rt.execute('tags', 'list');
    const page = (await rt.execute('tags', 'list')) as ListEnvelope;
    expect(page.data.length).toBe(size('tags'));
    expect(rt.lastCall.retries).toBeGreaterThanOrEqual(1);
    // The wait is the one X-RateLimit-Reset asks for: at most the 1 s window (plus its rounding to whole seconds), not a backoff guess.
    expect(rt.lastCall.waitedMs).toBeLessThanOrEqual(2000);
    expect(sent('/tags')).toHaveLength(2 + rt.lastCall.retries);
  });

  it('gives up on persistent 429s as upstream_rate_limited, with the error body', async () => {
    sim.inject({
      path: '/teams',
      status: 429,
      json: { type: 'error.list', request_id: null, errors: [{ code: 'rate_limit_exceeded', message: 'Exceeded rate limit' }] },
      headers: { 'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000)) },
      times: 4,
    });
    const err = await failure(list('teams'));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.message).toBe('intercom: Exceeded rate limit');
    expect(err.details).toMatchObject({ upstream_status: 429, attempts: 4 });
  });

  it('a 429 on a contact create is retried: Intercom did not run it (error rule not_executed)', async () => {
    sim.inject({
      path: '/contacts',
      status: 429,
      json: { type: 'error.list', request_id: null, errors: [{ code: 'rate_limit_exceeded', message: 'Exceeded rate limit' }] },
      headers: { 'X-RateLimit-Reset': String(Math.floor(Date.now() / 1000)) },
    });
    const before = size('contacts');
    const created = await one('contacts', 'create', { role: 'lead', name: 'Sent after the limit' });
    expect(created.data.name).toBe('Sent after the limit');
    expect(sent('/contacts').filter((r) => r.method === 'POST')).toHaveLength(2);
    // The injected 429 never reached the handler: exactly one contact was created.
    expect(size('contacts')).toBe(before + 1);
  });

  it('403 api_plan_restricted is upstream_rejected (not a credentials problem), with every error.list entry', async () => {
    sim.inject({
      path: '/segments',
      status: 403,
      json: { type: 'error.list', request_id: 'r1', errors: [{ code: 'api_plan_restricted', message: 'Active subscription needed.' }] },
    });
    const err = await failure(list('segments'));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toBe('intercom: Active subscription needed.');
    expect(err.errors).toEqual([{ path: '/', message: 'api_plan_restricted: Active subscription needed.' }]);
    sim.inject({
      path: '/contacts',
      status: 400,
      json: {
        type: 'error.list',
        request_id: 'r2',
        errors: [
          { code: 'parameter_invalid', message: 'Email invalid', field: 'email' },
          { code: 'parameter_invalid', message: 'Role invalid', field: 'role' },
        ],
      },
    });
    const bad = await failure(one('contacts', 'create', { role: 'lead', name: 'Two problems' }));
    expect(bad.code).toBe('upstream_rejected');
    expect(bad.errors).toEqual([
      { path: '/email', message: 'parameter_invalid: Email invalid' },
      { path: '/role', message: 'parameter_invalid: Role invalid' },
    ]);
  });

  it('retries a 503 for reads and upserts, not for contact creates; a non-JSON 200 is upstream_protocol_error', async () => {
    sim.inject({ path: '/segments', status: 503, text: 'Service Unavailable' });
    expect((await list('segments')).data).toHaveLength(size('segments'));
    // Tags and companies are created or updated by name / company_id: safe to send again.
    sim.inject({ path: '/tags', status: 503, text: 'Service Unavailable' });
    expect((await one('tags', 'create', { name: 'Sent twice' })).data.name).toBe('Sent twice');
    expect(sent('/tags').filter((r) => r.method === 'POST')).toHaveLength(2);
    sim.inject({ path: '/contacts', status: 503, text: 'Service Unavailable' });
    const err = await failure(one('contacts', 'create', { role: 'lead', name: 'Never sent twice' }));
    expect(err.code).toBe('upstream_unavailable');
    expect(sent('/contacts').filter((r) => r.method === 'POST')).toHaveLength(1);
    sim.inject({ path: '/admins', text: '{"type":"admin.list","admins":[' });
    expect((await failure(list('admins'))).code).toBe('upstream_protocol_error');
  });
});
