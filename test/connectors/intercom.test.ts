/**
 * The Intercom connector end to end: connectors/intercom/connector.yaml run by the interpreter
 * over real HTTP against the Intercom simulator. Every entity × action of the spec; records
 * checked against the manifest's record schemas and against the simulator's seeded data; lists
 * paged to the end; writes read back; upstream error bodies surfaced in error details.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { SYNC_ONLY_ACTIONS, type OAuth2Auth } from '../../src/manifest/index.ts';
import { projectDocument, searchDefOf } from '../../src/search/index.ts';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { failure } from '../helpers/errors.ts';
import { recordChecker } from '../helpers/records.ts';

type Rec = Record<string, unknown>;

const manifest = getConnector('intercom');
const expectValid = recordChecker(manifest);

let sim: IntercomSimulator;
beforeAll(async () => {
  sim = await startIntercomSimulator({ seed: 5, size: 300 });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setRateLimit({ limit: 1_000_000, window_seconds: 10 });
});

const intercom = (accessToken: string = sim.accessToken) =>
  connect('intercom', { credentials: { access_token: accessToken }, baseUrl: sim.url, retry: { baseDelayMs: 10 } });
const run = (entity: string, action: string, params?: Rec) =>
  intercom().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const list = (entity: string, params?: Rec) => run(entity, 'list', params) as Promise<ListEnvelope>;
const one = (entity: string, action: 'get' | 'create' | 'update', params: Rec) => run(entity, action, params) as Promise<RecordEnvelope>;
async function all(entity: string, params?: Rec): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const r of intercom().records(entity as never, params as never)) out.push(r as Rec);
  return out;
}
/** Requests the simulator received for a path (API calls only). */
const sent = (path?: string) => sim.requests.filter((r) => (path === undefined ? true : r.path === path));

/** The simulator's records of a resource (its generic store), in stored order, and their ids. */
const stored = (resource: string): Rec[] => sim.records(resource);
const ids = (resource: string): string[] => stored(resource).map((r) => r.id as string);
const size = (resource: string): number => sim.resources.get(resource)?.records.size ?? 0;

// ---------------------------------------------------------------- the manifest against the spec

/** The spec's entity × action tables: param → [type, required]. */
const contactFields: Record<string, [string, boolean]> = {
  external_id: ['string', false],
  email: ['string', false],
  phone: ['string', false],
  name: ['string', false],
  avatar: ['string', false],
  signed_up_at: ['integer', false],
  last_seen_at: ['integer', false],
  owner_id: ['integer', false],
  unsubscribed_from_emails: ['boolean', false],
  custom_attributes: ['object', false],
};
const companyFields: Record<string, [string, boolean]> = {
  name: ['string', false],
  plan: ['string', false],
  monthly_spend: ['number', false],
  size: ['integer', false],
  website: ['string', false],
  industry: ['string', false],
  custom_attributes: ['object', false],
};
const paging: Record<string, [string, boolean]> = { per_page: ['integer', false], starting_after: ['string', false] };
const byId: Record<string, [string, boolean]> = { id: ['string', true] };
const SPEC_ACTIONS: Record<string, Record<string, Record<string, [string, boolean]>>> = {
  contacts: { list: paging, create: { role: ['string', true], ...contactFields }, get: byId, update: { ...byId, role: ['string', false], ...contactFields } },
  conversations: { list: paging, get: byId },
  companies: { list: paging, create: { company_id: ['string', true], ...companyFields }, get: byId, update: { ...byId, ...companyFields } },
  teams: { list: {}, get: byId },
  admins: { list: {}, get: byId },
  tags: { list: {}, create: { name: ['string', true] }, get: byId },
  notes: { create: { body: ['string', true], contact_id: ['string', true], admin_id: ['string', false] } },
  segments: { list: { include_count: ['boolean', false] }, get: byId },
  internal_articles: { create: { title: ['string', true], owner_id: ['integer', true], author_id: ['integer', true], body: ['string', false] } },
};

/** The spec's Resources tables: field → JSON Schema type ('any' for object*). */
const S = (t: string, names: string): [string, string][] => names.split(/,\s*/).map((n) => [n, t]);
const SPEC_RECORDS: Record<string, [string, string][]> = {
  contacts: [
    ['id', 'string'],
    ...S(
      'string|null',
      'type, workspace_id, external_id, role, email, phone, name, avatar, language_override, browser, browser_version, browser_language, os, android_app_name, android_app_version, android_device, android_os_version, android_sdk_version, ios_app_name, ios_app_version, ios_device, ios_os_version, ios_sdk_version',
    ),
    ...S(
      'integer|null',
      'owner_id, created_at, updated_at, signed_up_at, last_seen_at, last_replied_at, last_contacted_at, last_email_opened_at, last_email_clicked_at, android_last_seen_at, ios_last_seen_at',
    ),
    ...S('boolean|null', 'has_hard_bounced, marked_email_as_spam, unsubscribed_from_emails'),
    ...S('any', 'social_profiles, location, tags, notes, companies'),
    ['custom_attributes', 'object|null'],
  ],
  conversations: [
    ['id', 'string'],
    ...S('string|null', 'type, title, state, priority, team_assignee_id'),
    ...S('integer|null', 'created_at, updated_at, waiting_since, snoozed_until, admin_assignee_id'),
    ...S('boolean|null', 'open, read'),
    ...S('any', 'tags, conversation_rating, source, contacts, teammates, first_contact_reply, sla_applied, statistics, conversation_parts'),
    ['custom_attributes', 'object|null'],
  ],
  companies: [
    ['id', 'string'],
    ...S('string|null', 'type, app_id, name, company_id, industry, website'),
    ...S('integer|null', 'size, remote_created_at, created_at, updated_at, last_request_at, session_count, user_count'),
    ['monthly_spend', 'number|null'],
    ...S('any', 'plan, tags, segments'),
    ['custom_attributes', 'object|null'],
  ],
  teams: [['id', 'string'], ...S('string|null', 'type, name'), ['admin_ids', 'array'], ['admin_priority_level', 'any']],
  admins: [
    ['id', 'string'],
    ...S('string|null', 'type, name, email, job_title'),
    ...S('boolean|null', 'email_verified, away_mode_enabled, away_mode_reassign, has_inbox_seat'),
    ['team_ids', 'array'],
    ['avatar', 'any'],
  ],
  tags: [['id', 'string'], ...S('string|null', 'type, name'), ['applied_at', 'integer|null'], ['applied_by', 'any']],
  notes: [['id', 'string'], ...S('string|null', 'type, body'), ['created_at', 'integer|null'], ...S('any', 'contact, author')],
  segments: [['id', 'string'], ...S('string|null', 'type, name, person_type'), ...S('integer|null', 'created_at, updated_at, count')],
  internal_articles: [
    ['id', 'integer|string'],
    ...S('string|null', 'title, body, locale'),
    ...S('integer|null', 'owner_id, author_id, created_at, updated_at'),
  ],
};
/**
 * Where the record follows Intercom 2.14 instead of the spec's type, because the manifest format
 * cannot reshape list records (see the comments in the manifest).
 */
const DEVIATIONS: Record<string, string> = {};

/** A contact as the manifest returns it: Intercom's avatar object mapped to its URL (spec type string). */
const asContact = (wire: Rec): Rec => ({ ...wire, avatar: ((wire.avatar as Rec | null)?.image_url as string | undefined) ?? null });
/** A conversation as the manifest returns it: team_assignee_id as a string (spec type). */
const asConversation = (wire: Rec): Rec => ({
  ...wire,
  team_assignee_id: wire.team_assignee_id === null || wire.team_assignee_id === undefined ? null : String(wire.team_assignee_id),
});

describe('the manifest against the spec', () => {
  it('declares exactly the 21 entity × action pairs, with exactly the spec params', () => {
    let pairs = 0;
    expect([...manifest.entities.keys()].sort()).toEqual(Object.keys(SPEC_ACTIONS).sort());
    for (const [entity, actions] of Object.entries(SPEC_ACTIONS)) {
      const e = manifest.entities.get(entity);
      // Sync-only actions (changes, scroll) are not the spec's actions: they have tests of their own below.
      expect([...(e?.actions.keys() ?? [])].filter((a) => !SYNC_ONLY_ACTIONS.has(a)).sort(), entity).toEqual(Object.keys(actions).sort());
      for (const [action, params] of Object.entries(actions)) {
        pairs++;
        const declared = (e?.actions.get(action as never)?.def.params ?? {}) as Record<string, { type: string; required?: boolean }>;
        expect(Object.keys(declared).sort(), `${entity}.${action}`).toEqual(Object.keys(params).sort());
        for (const [name, [type, required]] of Object.entries(params)) {
          expect(declared[name]?.type, `${entity}.${action}.${name}`).toBe(type);
          expect(declared[name]?.required === true, `${entity}.${action}.${name} required`).toBe(required);
        }
      }
    }
    expect(pairs).toBe(21);
    const role = manifest.entities.get('contacts')?.actions.get('create')?.def.params?.role as { enum?: string[] };
    expect(role.enum).toEqual(['user', 'lead']);
  });

  it('declares every record field of the spec with its type and nullability', () => {
    for (const [entity, fields] of Object.entries(SPEC_RECORDS)) {
      const record = manifest.entities.get(entity)?.def.record as { properties: Record<string, { type?: string | string[] }>; required: string[] };
      expect(record.required, entity).toEqual(['id']);
      for (const [field, type] of fields) {
        const prop = record.properties[field];
        expect(prop, `${entity}.${field}`).toBeDefined();
        const want = DEVIATIONS[`${entity}.${field}`] ?? type;
        const got = prop?.type === undefined ? 'any' : ([] as string[]).concat(prop.type).join('|');
        expect(got, `${entity}.${field}`).toBe(want);
      }
    }
  });

  it('sends Intercom-Version 2.14, knows the three regional hosts and both auth variants', () => {
    expect(manifest.manifest.headers?.['Intercom-Version']).toBe('2.14');
    expect(manifest.manifest.base_url).toEqual({
      default: 'https://api.intercom.io',
      regions: { us: 'https://api.intercom.io', eu: 'https://api.eu.intercom.io', au: 'https://api.au.intercom.io' },
    });
    const eu = new ConnectorRuntime(manifest, { access_token: 't' }, { region: 'eu' });
    expect(eu.render(eu.action('contacts', 'list'), {}).url).toBe('https://api.eu.intercom.io/contacts');
    const au = new ConnectorRuntime(manifest, { access_token: 't' }, { config: { region: 'au' } });
    expect(au.render(au.action('teams', 'get'), { id: '7' }).url).toBe('https://api.au.intercom.io/teams/7');
    expect(manifest.manifest.auth.map((v) => [v.name, v.type, Object.keys(v.fields)])).toEqual([
      ['access_token', 'bearer', ['access_token']],
      ['oauth', 'oauth2', ['access_token']],
    ]);
    expect(manifest.manifest.auth[1]).toMatchObject({
      authorize_url: 'https://app.intercom.com/oauth',
      token_url: 'https://api.intercom.io/auth/eagle/token',
      refreshes: false,
      expires: false,
    });
    expect(manifest.manifest.list_meta).toEqual({ next_page: expect.objectContaining({ type: ['string', 'null'] }) });
  });
});

// ---------------------------------------------------------------- entities × actions

describe('intercom contacts', () => {
  it('list: a page of seeded contacts, newest first, with next_page', async () => {
    const page = await list('contacts', { per_page: 5 });
    expectValid('contacts', page.data);
    const rows = stored('contacts').slice(-5).reverse();
    expect(page.data).toEqual(rows.map((r) => asContact(r)));
    expect(typeof page.meta.next_page).toBe('string');
    const next = await list('contacts', { per_page: 5, starting_after: page.meta.next_page as string });
    expect(next.data.map((c) => c.id)).toEqual(ids('contacts').slice(-10, -5).reverse());
    const req = sent('/contacts')[1];
    expect(req?.query.get('starting_after')).toBe(page.meta.next_page);
  });

  it('list: records() follows starting_after through every page; the last page has next_page null', async () => {
    const records = await all('contacts', { per_page: 50 });
    expect(records.map((c) => c.id)).toEqual(ids('contacts').reverse());
    expectValid('contacts', records);
    expect(sent('/contacts')).toHaveLength(Math.ceil(size('contacts') / 50));
    const pages: ListEnvelope[] = [];
    for await (const p of intercom().pages('contacts' as never, { per_page: 150 } as never)) pages.push(p as ListEnvelope);
    expect(pages.map((p) => p.data.length)).toEqual([150, size('contacts') - 150]);
    expect(pages[1]?.meta).toEqual({ next_page: null });
  });

  it('get: one contact with its relations; unknown id surfaces the error.list', async () => {
    const row = stored('contacts').find((r) => ((r.notes as Rec).total_count as number) > 0 && ((r.companies as Rec).total_count as number) > 0) as Rec;
    const got = await one('contacts', 'get', { id: row.id as string });
    expectValid('contacts', [got.data]);
    expect(got.data).toEqual(asContact(row));
    expect((got.data.companies as Rec).total_count).toBe((row.companies as Rec).total_count);

    const err = await failure(one('contacts', 'get', { id: '5f0000000000000000000000' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.message).toBe('intercom: User Not Found');
    expect(err.details.upstream_status).toBe(404);
    expect(err.details.upstream_body).toMatchObject({ type: 'error.list', errors: [{ code: 'not_found', message: 'User Not Found' }] });
  });

  it('create then get: the new contact is visible, with the avatar URL Intercom wraps in an object', async () => {
    const created = await one('contacts', 'create', {
      role: 'user',
      external_id: 'sb-1001',
      email: 'grace@hopper.example',
      name: 'Grace Hopper',
      phone: '+1 555 0100',
      avatar: 'https://example.com/grace.png',
      signed_up_at: 1700000000,
      last_seen_at: 1700003600,
      owner_id: Number(ids('admins')[0]),
      unsubscribed_from_emails: true,
      custom_attributes: { plan_tier: 'pro', seats: 12 },
    });
    expectValid('contacts', [created.data]);
    expect(created.data).toMatchObject({
      type: 'contact',
      role: 'user',
      external_id: 'sb-1001',
      email: 'grace@hopper.example',
      name: 'Grace Hopper',
      avatar: 'https://example.com/grace.png',
      signed_up_at: 1700000000,
      last_seen_at: 1700003600,
      unsubscribed_from_emails: true,
      custom_attributes: { plan_tier: 'pro', seats: 12 },
    });
    const body = JSON.parse(sent('/contacts').at(-1)?.rawBody ?? '{}') as Rec;
    expect(body).toEqual({
      role: 'user',
      external_id: 'sb-1001',
      email: 'grace@hopper.example',
      phone: '+1 555 0100',
      name: 'Grace Hopper',
      avatar: 'https://example.com/grace.png',
      signed_up_at: 1700000000,
      last_seen_at: 1700003600,
      owner_id: Number(ids('admins')[0]),
      unsubscribed_from_emails: true,
      custom_attributes: { plan_tier: 'pro', seats: 12 },
    });
    const got = await one('contacts', 'get', { id: created.data.id as string });
    expect(got.data).toEqual(created.data);
    expect((await list('contacts', { per_page: 1 })).data[0]?.id).toBe(created.data.id);
  });

  it('update then get: changed fields stick, custom attributes merge, the role can change', async () => {
    const lead = await one('contacts', 'create', { role: 'lead', email: 'lead@prospect.example', custom_attributes: { lead_source: 'webinar' } });
    const updated = await one('contacts', 'update', {
      id: lead.data.id as string,
      role: 'user',
      name: 'Converted Lead',
      custom_attributes: { plan_tier: 'starter' },
    });
    expectValid('contacts', [updated.data]);
    expect(updated.data).toMatchObject({
      role: 'user',
      name: 'Converted Lead',
      email: 'lead@prospect.example',
      custom_attributes: { lead_source: 'webinar', plan_tier: 'starter' },
    });
    expect(sent(`/contacts/${lead.data.id}`).at(-1)?.method).toBe('PUT');
    expect((await one('contacts', 'get', { id: lead.data.id as string })).data).toEqual(updated.data);
  });

  it('writes Intercom refuses come back as upstream_rejected with its error body; bad params never leave', async () => {
    await one('contacts', 'create', { role: 'user', email: 'dup@example.com' });
    const dup = await failure(one('contacts', 'create', { role: 'user', email: 'dup@example.com' }));
    expect(dup.code).toBe('upstream_rejected');
    expect(dup.message).toMatch(/^intercom: A contact matching those details already exists with id=/);
    expect(dup.details).toMatchObject({ upstream_status: 409, upstream_body: { type: 'error.list', errors: [{ code: 'conflict' }] } });

    const attr = await failure(one('contacts', 'create', { role: 'user', custom_attributes: { favourite_colour: 'teal' } }));
    expect(attr.code).toBe('upstream_rejected');
    expect(attr.details).toMatchObject({
      upstream_status: 400,
      upstream_body: { errors: [{ code: 'parameter_invalid', message: "Custom attribute 'favourite_colour' does not exist" }] },
    });

    const before = sim.requests.length;
    expect((await failure(one('contacts', 'create', { email: 'no-role@example.com' }))).code).toBe('invalid_params');
    expect((await failure(one('contacts', 'create', { role: 'admin' }))).code).toBe('invalid_params');
    expect((await failure(list('contacts', { per_page: 151 }))).code).toBe('invalid_params');
    expect((await failure(one('contacts', 'update', { id: 'x', colour: 'red' }))).code).toBe('invalid_params');
    expect(sim.requests.length).toBe(before);
  });
});

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
