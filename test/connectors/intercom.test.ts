/**
 * The Intercom connector end to end: connectors/intercom/connector.yaml run by the interpreter
 * over real HTTP against the Intercom simulator. Every entity × action of the spec; records
 * checked against the manifest's record schemas and against the simulator's seeded data; lists
 * paged to the end; writes read back; upstream error bodies surfaced in error details. Here the
 * manifest against the spec and contacts; the other entities, auth and faults in intercom-api.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime, type ListEnvelope } from '../../src/index.ts';
import { SYNC_ONLY_ACTIONS } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';
import {
  all,
  asContact,
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
