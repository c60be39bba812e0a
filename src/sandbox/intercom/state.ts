/**
 * The Intercom simulator's in-memory workspace: seeded tables, the API shapes of each record,
 * and the mutations the simulated endpoints perform.
 *
 * Small tables (admins, teams, tags, segments, notes, internal articles) hold their records.
 * Big tables (contacts, companies, conversations) hold a Row per record: identity, timestamps,
 * relations and the fields changed through the API; everything else is regenerated from
 * (seed, gen) whenever the record is rendered (see data.ts).
 *
 * What is declared lives in connectors/intercom/simulator.yaml: the vocabularies (`pools`), the
 * segments' membership rules (search queries, read with the generic filter tree of
 * src/simulator/rules.ts) and the blank records creates start from (`resources.*.template`).
 * What stays here is what correlates: a contact's fields with each other and its company, a
 * conversation's timeline and the statistics derived from it, and the writes' rules.
 */
import { SimulatorError } from '../../simulator/openapi-simulator.ts';
import { compileFilter, fill, type SearchRule } from '../../simulator/rules.ts';
import { mixSeed, pick, seededRandom } from '../../simulator/sim-server.ts';
import {
  ADMIN_JOB_TITLES,
  ARTICLE_TITLES,
  BROWSERS,
  chance,
  companyName,
  EMAIL_DOMAINS,
  emailLocal,
  htmlBody,
  INDUSTRIES,
  INTERCOM_SIDECAR,
  int,
  LOCATIONS,
  MESSAGES,
  NOTE_BODIES,
  objectId,
  OPERATING_SYSTEMS,
  personName,
  phoneNumber,
  PLANS,
  recordRandom,
  REPLIES,
  SEGMENTS,
  slug,
  SUBJECTS,
  TAG_NAMES,
  TEAM_NAMES,
  UTM_CAMPAIGNS,
  UTM_MEDIUMS,
  UTM_SOURCES,
  type Json,
  type Rand,
} from './data.ts';

export type { Json } from './data.ts';

const DAY = 86_400;
/** Seeded data ends here (2026-10-30T17:00:00Z), so it is identical whatever the wall clock. */
export const DEFAULT_ANCHOR = Date.UTC(2026, 9, 30, 17) / 1000;

// Salts of the per-record PRNG streams.
const S_CONTACT = 1;
const S_COMPANY = 2;
const S_CONVERSATION = 3;
const S_STRUCTURE = 4;
const S_SMALL = 5;

export interface AdminRecord {
  type: 'admin';
  id: string;
  name: string;
  email: string;
  job_title: string;
  away_mode_enabled: boolean;
  away_mode_reassign: boolean;
  away_status_reason_id: number | null;
  has_inbox_seat: boolean;
  team_ids: number[];
  avatar: { type: 'avatar'; image_url: string | null };
  email_verified: boolean;
}

export interface TeamRecord {
  type: 'team';
  id: string;
  name: string;
  admin_ids: number[];
  admin_priority_level: { primary_admin_ids: number[] | null; secondary_admin_ids: number[] | null };
  assignment_limit: number | null;
  distribution_method: string | null;
}

export interface TagRecord {
  type: 'tag';
  id: string;
  name: string;
}

export interface SegmentRecord {
  type: 'segment';
  id: string;
  name: string;
  created_at: number;
  updated_at: number;
  person_type: 'user' | 'contact';
  /** Membership rule (not part of the API shape). */
  rule: (contact: Json) => boolean;
}

export interface NoteRecord {
  type: 'note';
  id: string;
  created_at: number;
  contact: { type: 'contact'; id: string };
  /** Admin id of the author; rendered as the admin object. */
  authorId: string;
  body: string;
}

export interface InternalArticleRecord {
  type: 'internal_article';
  id: string;
  title: string;
  body: string | null;
  owner_id: number;
  author_id: number;
  created_at: number;
  updated_at: number;
  locale: string;
}

export interface ContactRow {
  id: string;
  /** Seed generation; -1 for contacts created through the API. */
  gen: number;
  created_at: number;
  companyIds: string[];
  tagIds: string[];
  noteIds: string[];
  /** Fields set through the API, over the generated ones. */
  patch?: Json;
  /** Bitmask of SEGMENTS the contact belongs to. */
  segments: number;
}

export interface CompanyRow {
  id: string;
  gen: number;
  company_id: string;
  created_at: number;
  userCount: number;
  tagIds: string[];
  patch?: Json;
}

export interface ConversationRow {
  id: string;
  gen: number;
  created_at: number;
  contactId: string;
}

function withoutNulls(o: Json): Json {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
}

/** An append-only table with a stable list order (insertion order, oldest first). */
export class Table<R extends { id: string }> {
  readonly rows: R[] = [];
  private readonly index = new Map<string, number>();
  add(row: R): R {
    this.index.set(row.id, this.rows.length);
    this.rows.push(row);
    return row;
  }
  get(id: string): R | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.rows[i];
  }
  /** Position in insertion order, or -1. */
  position(id: string): number {
    return this.index.get(id) ?? -1;
  }
  get size(): number {
    return this.rows.length;
  }
}

/** Contact custom attributes that exist as data attributes in the seeded workspace. */
export const CONTACT_DATA_ATTRIBUTES = ['plan_tier', 'seats', 'beta_user', 'signup_source', 'lead_source', 'account_manager', 'lifetime_value'] as const;

/** Thrown by mutations; the server turns it into an error.list response. */
export class IntercomApiError extends SimulatorError {}

export interface StoreOptions {
  seed: number;
  /** Number of seeded contacts; companies and conversations scale with it. */
  size: number;
  /** Unix seconds the seeded data ends at. */
  anchor: number;
  /** Clock for records created through the API (Unix seconds). */
  now?: () => number;
}

const SIZE_MAX = 100_000;

export class IntercomStore {
  readonly seed: number;
  readonly anchor: number;
  readonly workspaceId: string;
  readonly appName = 'Switchboard Sandbox';
  readonly admins = new Table<AdminRecord>();
  readonly teams = new Table<TeamRecord>();
  readonly tags = new Table<TagRecord>();
  readonly segments = new Table<SegmentRecord>();
  readonly companies = new Table<CompanyRow>();
  readonly contacts = new Table<ContactRow>();
  readonly conversations = new Table<ConversationRow>();
  readonly notes = new Table<NoteRecord>();
  readonly internalArticles = new Table<InternalArticleRecord>();
  /** Lower-cased email → contact id, and external_id → contact id (uniqueness checks). */
  private readonly byEmail = new Map<string, string>();
  private readonly byExternalId = new Map<string, string>();
  private readonly byCompanyId = new Map<string, string>();
  private readonly segmentCounts: number[] = SEGMENTS.map(() => 0);
  private readonly domains = new Map<string, string>();
  /** The clock of mutations (Unix seconds); tests and benches may set it to place edits after a sync. */
  now: () => number;
  private nextTagId = 0;
  private nextNoteId = 0;
  private nextArticleId = 0;
  private idCounter = 0;
  private idRand: Rand;
  /** Companies with users, by last_request_at descending (cache for the list endpoints). */
  private listedCompanies: CompanyRow[] | undefined;

  constructor(options: StoreOptions) {
    const { seed, anchor } = options;
    const size = options.size;
    if (!Number.isInteger(size) || size < 0 || size > SIZE_MAX) throw new RangeError(`size must be an integer from 0 to ${SIZE_MAX}, got ${size}`);
    this.seed = seed;
    this.anchor = anchor;
    this.now = options.now ?? (() => Math.floor(Date.now() / 1000));
    this.idRand = seededRandom(mixSeed(seed, 0x1d));
    const small = seededRandom(mixSeed(seed, S_SMALL));
    this.workspaceId = Array.from({ length: 8 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(small() * 36)]).join('');
    this.seedSmallTables(small);
    this.seedBigTables(size);
  }

  // ---------------------------------------------------------------- seeding

  private newObjectId(unixSeconds: number): string {
    return objectId(this.idRand, unixSeconds, this.idCounter++);
  }

  private seedSmallTables(rand: Rand): void {
    const start = this.anchor - 3 * 365 * DAY;
    // Admins: numeric ids in Intercom's range; the first one owns the access token (GET /me).
    for (let i = 0; i < 12; i++) {
      const { first, last } = personName(rand);
      this.admins.add({
        type: 'admin',
        id: String(991267401 + i * 7 + int(rand, 0, 6)),
        name: `${first} ${last}`,
        email: `${emailLocal(first, last)}@switchboard-sandbox.example`,
        job_title: pick(rand, ADMIN_JOB_TITLES),
        away_mode_enabled: chance(rand, 0.15),
        away_mode_reassign: chance(rand, 0.1),
        away_status_reason_id: null,
        has_inbox_seat: i < 10,
        team_ids: [],
        avatar: { type: 'avatar', image_url: chance(rand, 0.7) ? `https://static.intercomassets.com/avatars/${7000000 + i}/square_128/${slug(first)}.jpg` : null },
        email_verified: true,
      });
    }
    const adminIds = this.admins.rows.map((a) => Number(a.id));
    TEAM_NAMES.slice(0, 5).forEach((name, i) => {
      const members = adminIds.filter(() => chance(rand, 0.35));
      if (members.length === 0) members.push(adminIds[i] as number);
      const team: TeamRecord = {
        type: 'team',
        id: String(5017691 + i),
        name,
        admin_ids: members,
        admin_priority_level: { primary_admin_ids: members.slice(0, 1), secondary_admin_ids: members.slice(1) },
        assignment_limit: chance(rand, 0.5) ? int(rand, 5, 20) : null,
        distribution_method: pick(rand, ['round_robin', 'balanced'] as const),
      };
      this.teams.add(team);
      for (const adminId of members) this.admins.get(String(adminId))?.team_ids.push(Number(team.id));
    });
    for (const name of TAG_NAMES) this.tags.add({ type: 'tag', id: String(101 + this.nextTagId++), name });
    // Membership rules are search queries (the sidecar's segments pool), read with the contact search rule's operators.
    const { allowed: _allowed, ...searchRule } = INTERCOM_SIDECAR.search?.['POST /contacts/search'] as SearchRule;
    const atAnchor = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(atAnchor) : v !== null && typeof v === 'object' ? ('days_ago' in v ? this.anchor - (v as { days_ago: number }).days_ago * DAY : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, atAnchor(x)]))) : v;
    for (const [name, personType, tree] of SEGMENTS) {
      const rule = compileFilter(searchRule, atAnchor(tree), undefined);
      const created = start + int(rand, 0, 200) * DAY;
      this.segments.add({
        type: 'segment',
        id: this.newObjectId(created),
        name,
        created_at: created,
        updated_at: created + int(rand, 0, 400) * DAY,
        person_type: personType,
        rule,
      });
    }
    for (const title of ARTICLE_TITLES) {
      const created = start + int(rand, 0, 1000) * DAY;
      const author = pick(rand, this.admins.rows);
      this.internalArticles.add({
        type: 'internal_article',
        id: String(1001 + this.nextArticleId++),
        title,
        body: `<p>${title}: internal guidance for the support team.</p><p>${pick(rand, REPLIES)}</p>`,
        owner_id: Number(pick(rand, this.admins.rows).id),
        author_id: Number(author.id),
        created_at: created,
        updated_at: Math.min(this.anchor, created + int(rand, 0, 90) * DAY),
        locale: 'en',
      });
    }
  }

  private seedBigTables(size: number): void {
    const rand = seededRandom(mixSeed(this.seed, S_STRUCTURE));
    const companyCount = size === 0 ? 0 : Math.max(10, Math.round(size / 5));
    const conversationCount = Math.round(size / 2);
    const noteCount = Math.round(size * 0.3);
    const span = Math.max(2 * 365 * DAY, size * 600);

    // Companies first: contacts point at them and make up their user_count.
    const companyStart = this.anchor - span - 365 * DAY;
    const companyGap = companyCount > 0 ? (span + 300 * DAY) / companyCount : 0;
    for (let gen = 0; gen < companyCount; gen++) {
      const created = Math.floor(companyStart + gen * companyGap + rand() * companyGap * 0.9);
      const row: CompanyRow = { id: this.newObjectId(created), gen, company_id: `comp_${String(gen + 1).padStart(6, '0')}`, created_at: created, userCount: 0, tagIds: [] };
      if (chance(rand, 0.25)) row.tagIds.push((this.tags.rows[int(rand, 0, this.tags.size - 1)] as TagRecord).id);
      this.companies.add(row);
      this.byCompanyId.set(row.company_id, row.id);
    }

    const contactStart = this.anchor - span;
    const contactGap = size > 0 ? span / size : 0;
    for (let gen = 0; gen < size; gen++) {
      const created = Math.floor(contactStart + gen * contactGap + rand() * contactGap * 0.9);
      const row: ContactRow = { id: this.newObjectId(created), gen, created_at: created, companyIds: [], tagIds: [], noteIds: [], segments: 0 };
      if (companyCount > 0 && chance(rand, 0.85)) {
        row.companyIds.push((this.companies.rows[Math.floor(rand() * companyCount)] as CompanyRow).id);
        if (chance(rand, 0.06)) {
          const second = (this.companies.rows[Math.floor(rand() * companyCount)] as CompanyRow).id;
          if (second !== row.companyIds[0]) row.companyIds.push(second);
        }
      }
      const tagN = chance(rand, 0.35) ? int(rand, 1, 3) : 0;
      for (let t = 0; t < tagN; t++) {
        const tagId = (this.tags.rows[Math.floor(rand() * this.tags.size)] as TagRecord).id;
        if (!row.tagIds.includes(tagId)) row.tagIds.push(tagId);
      }
      for (const c of row.companyIds) (this.companies.get(c) as CompanyRow).userCount++;
      this.contacts.add(row);
      const fields = this.contactFields(row);
      this.indexContact(row, undefined, fields);
    }

    // Conversations: each with one contact, started after the contact was created; ids grow with time.
    const convs: { gen: number; created: number; contactId: string }[] = [];
    for (let gen = 0; gen < conversationCount; gen++) {
      const contact = this.contacts.rows[Math.floor(rand() * size)] as ContactRow;
      const created = contact.created_at + Math.floor(rand() * Math.max(1, this.anchor - DAY - contact.created_at));
      convs.push({ gen, created, contactId: contact.id });
    }
    convs.sort((a, b) => a.created - b.created || a.gen - b.gen);
    convs.forEach((c, i) => {
      this.conversations.add({ id: String(215468000000000 + i * 100 + int(rand, 0, 99)), gen: c.gen, created_at: c.created, contactId: c.contactId });
    });

    const notes: { created: number; contact: ContactRow }[] = [];
    for (let n = 0; n < noteCount; n++) {
      const contact = this.contacts.rows[Math.floor(rand() * size)] as ContactRow;
      notes.push({ created: contact.created_at + Math.floor(rand() * Math.max(1, this.anchor - contact.created_at)), contact });
    }
    notes.sort((a, b) => a.created - b.created);
    for (const n of notes) {
      const note: NoteRecord = {
        type: 'note',
        id: String(1 + this.nextNoteId++),
        created_at: n.created,
        contact: { type: 'contact', id: n.contact.id },
        authorId: pick(rand, this.admins.rows).id,
        body: `<p>${pick(rand, NOTE_BODIES)}</p>`,
      };
      this.notes.add(note);
      n.contact.noteIds.push(note.id);
    }
  }

  // ---------------------------------------------------------------- contacts

  /** The generated fields of a seeded contact (no relations), in Intercom's field order. */
  private generatedContact(row: ContactRow): Json {
    const r = recordRandom(this.seed, S_CONTACT, row.gen);
    const role = chance(r, 0.82) ? 'user' : 'lead';
    const { first, last } = personName(r);
    const loc = pick(r, LOCATIONS);
    const company = row.companyIds[0] !== undefined ? this.companies.get(row.companyIds[0]) : undefined;
    const domain = company !== undefined && chance(r, 0.7) ? this.companyDomain(company) : pick(r, EMAIL_DOMAINS);
    const created = row.created_at;
    const age = Math.max(1, this.anchor - created);
    const seen = chance(r, 0.88) ? created + Math.floor(r() * age) : null;
    const at = (p: number): number | null => (chance(r, p) ? created + Math.floor(r() * age) : null);
    const [browser, versions] = pick(r, BROWSERS);
    const android = chance(r, 0.1);
    const ios = !android && chance(r, 0.12);
    const utm = chance(r, 0.25);
    const opened = at(0.35);
    const list = (what: string): Json => ({ type: 'list', data: [], url: `/contacts/${row.id}/${what}`, total_count: 0, has_more: false });
    const name = role === 'lead' && chance(r, 0.15) ? null : `${first} ${last}`;
    const signedUp = role === 'user' ? created - (chance(r, 0.3) ? int(r, 0, 400) * DAY : 0) : null;
    const updated = Math.max(created, seen ?? created, created + Math.floor(r() * age * 0.5));
    return {
      type: 'contact',
      id: row.id,
      workspace_id: this.workspaceId,
      external_id: role === 'user' && chance(r, 0.9) ? `usr_${String(100000 + row.gen)}` : null,
      role,
      email: `${emailLocal(first, last)}${row.gen + 1}@${domain}`,
      phone: chance(r, 0.45) ? phoneNumber(r, loc[3]) : null,
      name,
      avatar: chance(r, 0.25) ? { type: 'avatar', image_url: `https://static.intercomassets.com/avatars/${row.gen + 1}/square_128/${slug(first)}-${slug(last)}.jpg` } : null,
      owner_id: chance(r, 0.3) ? Number(pick(r, this.admins.rows).id) : null,
      social_profiles: {
        type: 'list',
        data: chance(r, 0.2) ? [{ type: 'social_profile', name: 'Twitter', url: `https://twitter.com/${emailLocal(first, last).replace('.', '_')}` }] : [],
      },
      has_hard_bounced: chance(r, 0.015),
      marked_email_as_spam: chance(r, 0.01),
      unsubscribed_from_emails: chance(r, 0.08),
      created_at: created,
      updated_at: Math.min(updated, this.anchor),
      signed_up_at: signedUp,
      last_seen_at: seen,
      last_replied_at: at(0.35),
      last_contacted_at: at(0.4),
      last_email_opened_at: opened,
      last_email_clicked_at: opened !== null && chance(r, 0.4) ? opened + int(r, 10, 3600) : null,
      language_override: chance(r, 0.04) ? pick(r, ['fr', 'de', 'es', 'pt-BR'] as const) : null,
      browser: seen !== null ? browser : null,
      browser_version: seen !== null ? pick(r, versions) : null,
      browser_language: seen !== null ? loc[5] : null,
      os: seen !== null ? pick(r, OPERATING_SYSTEMS) : null,
      location: { type: 'location', country: loc[2], region: loc[1], city: loc[0], country_code: loc[3], continent_code: loc[4] },
      android_app_name: android ? 'Acme Mobile' : null,
      android_app_version: android ? `4.${int(r, 0, 9)}.${int(r, 0, 9)}` : null,
      android_device: android ? pick(r, ['Pixel 8', 'Pixel 7a', 'Galaxy S24', 'OnePlus 12'] as const) : null,
      android_os_version: android ? pick(r, ['13', '14', '15'] as const) : null,
      android_sdk_version: android ? '15.6.1' : null,
      android_last_seen_at: android ? (seen ?? created) : null,
      ios_app_name: ios ? 'Acme Mobile' : null,
      ios_app_version: ios ? `4.${int(r, 0, 9)}.${int(r, 0, 9)}` : null,
      ios_device: ios ? pick(r, ['iPhone 15', 'iPhone 14 Pro', 'iPad Air'] as const) : null,
      ios_os_version: ios ? pick(r, ['17.5', '17.6', '18.0'] as const) : null,
      ios_sdk_version: ios ? '17.2.0' : null,
      ios_last_seen_at: ios ? (seen ?? created) : null,
      custom_attributes:
        role === 'user'
          ? { plan_tier: pick(r, ['free', 'starter', 'pro', 'enterprise'] as const), seats: int(r, 1, 250), beta_user: chance(r, 0.2) }
          : { lead_source: pick(r, ['website', 'webinar', 'trade show', 'referral'] as const) },
      opted_out_subscription_types: list('subscriptions'),
      opted_in_subscription_types: list('subscriptions'),
      utm_campaign: utm ? pick(r, UTM_CAMPAIGNS) : null,
      utm_content: utm && chance(r, 0.5) ? pick(r, ['hero_cta', 'pricing_banner', 'footer_link'] as const) : null,
      utm_medium: utm ? pick(r, UTM_MEDIUMS) : null,
      utm_source: utm ? pick(r, UTM_SOURCES) : null,
      utm_term: utm && chance(r, 0.3) ? pick(r, ['customer messaging', 'help desk', 'live chat'] as const) : null,
      referrer: chance(r, 0.3) ? pick(r, ['https://www.google.com/', 'https://www.linkedin.com/', 'https://news.ycombinator.com/', 'https://www.g2.com/'] as const) : null,
    };
  }

  /** A created record's starting fields (the sidecar's template); the request body's values are patched over them. */
  private blank(resource: 'contacts' | 'companies', row: { id: string; created_at: number; company_id?: string }): Json {
    const template = INTERCOM_SIDECAR.resources?.[resource]?.template;
    return fill(template, { id: row.id, now: row.created_at, workspace_id: this.workspaceId, company_id: row.company_id }) as Json;
  }

  /** Scalar fields of a contact: generated or blank, with API changes applied. */
  private contactFields(row: ContactRow): Json {
    const base = row.gen >= 0 ? this.generatedContact(row) : this.blank('contacts', row);
    return row.patch === undefined ? base : { ...base, ...row.patch };
  }

  /** A contact as GET /contacts/{id} returns it; list items omit enabled_push_messaging. */
  renderContact(row: ContactRow, options: { detail?: boolean } = {}): Json {
    const f = this.contactFields(row);
    const relation = (what: string, ids: string[], type: string, url: (id: string) => string): Json => ({
      type: 'list',
      data: ids.slice(0, 10).map((id) => ({ type, id, url: url(id) })),
      url: `/contacts/${row.id}/${what}`,
      total_count: ids.length,
      has_more: ids.length > 10,
    });
    return {
      ...f,
      tags: relation('tags', row.tagIds, 'tag', (id) => `/tags/${id}`),
      notes: relation('notes', row.noteIds, 'note', (id) => `/notes/${id}`),
      companies: relation('companies', row.companyIds, 'company', (id) => `/companies/${id}`),
      ...(options.detail ? { enabled_push_messaging: null } : {}),
    };
  }

  /** Segment bitmask of a contact's fields. */
  private segmentMask(f: Json): number {
    return this.segments.rows.reduce((mask, s, i) => (s.rule(f) ? mask | (1 << i) : mask), 0);
  }

  /** Update uniqueness indexes and segment counts after a contact's fields changed. */
  private indexContact(row: ContactRow, before: Json | undefined, after: Json): void {
    if (before !== undefined) {
      if (typeof before.email === 'string') this.byEmail.delete(before.email.toLowerCase());
      if (typeof before.external_id === 'string') this.byExternalId.delete(before.external_id);
      for (let i = 0; i < SEGMENTS.length; i++) if (row.segments & (1 << i)) (this.segmentCounts[i] as number)--;
    }
    if (typeof after.email === 'string' && after.email !== '') this.byEmail.set(after.email.toLowerCase(), row.id);
    if (typeof after.external_id === 'string') this.byExternalId.set(after.external_id, row.id);
    row.segments = this.segmentMask(after);
    for (let i = 0; i < SEGMENTS.length; i++) if (row.segments & (1 << i)) (this.segmentCounts[i] as number)++;
  }

  /** 409 when another contact already has this email or external_id (Intercom's `conflict`). */
  private checkContactConflict(body: Json, self?: string): void {
    const byEmail = typeof body.email === 'string' ? this.byEmail.get(body.email.toLowerCase()) : undefined;
    const byExternal = typeof body.external_id === 'string' ? this.byExternalId.get(body.external_id) : undefined;
    const other = [byEmail, byExternal].find((id) => id !== undefined && id !== self);
    if (other !== undefined) throw new IntercomApiError(409, 'conflict', `A contact matching those details already exists with id=${other}`);
  }

  /** Map a create/update contact body onto stored fields, checking what the schema cannot. */
  private contactPatch(body: Json, current: Json | undefined): Json {
    const patch: Json = {};
    if (body.role !== undefined) {
      if (body.role !== 'user' && body.role !== 'lead') throw new IntercomApiError(400, 'parameter_invalid', 'role must be one of: user, lead');
      patch.role = body.role;
    }
    for (const k of ['external_id', 'email', 'phone', 'name', 'signed_up_at', 'last_seen_at', 'owner_id', 'unsubscribed_from_emails'] as const) {
      if (body[k] !== undefined) patch[k] = body[k];
    }
    if (typeof body.email === 'string') patch.email = body.email.trim();
    // Contacts take an image URL; Intercom returns it as an avatar object.
    if (body.avatar !== undefined) patch.avatar = body.avatar === null ? null : { type: 'avatar', image_url: body.avatar };
    if (body.custom_attributes !== undefined && body.custom_attributes !== null) {
      const attrs = body.custom_attributes as Json;
      // Contact custom attributes must exist as data attributes before they can be written.
      const unknown = Object.keys(attrs).find((k) => !(CONTACT_DATA_ATTRIBUTES as readonly string[]).includes(k));
      if (unknown !== undefined) throw new IntercomApiError(400, 'parameter_invalid', `Custom attribute '${unknown}' does not exist`);
      patch.custom_attributes = { ...((current?.custom_attributes as Json | undefined) ?? {}), ...attrs };
    }
    return patch;
  }

  createContact(body: Json): ContactRow {
    this.checkContactConflict(body);
    const now = this.now();
    const row: ContactRow = { id: this.newObjectId(now), gen: -1, created_at: now, companyIds: [], tagIds: [], noteIds: [], segments: 0 };
    const patch = this.contactPatch(body, undefined);
    if (patch.role === 'user' && patch.signed_up_at === undefined) patch.signed_up_at = now;
    row.patch = { ...patch, updated_at: now };
    this.contacts.add(row);
    this.indexContact(row, undefined, this.contactFields(row));
    return row;
  }

  updateContact(id: string, body: Json): ContactRow {
    const row = this.contacts.get(id);
    if (row === undefined) throw new IntercomApiError(404, 'not_found', 'User Not Found');
    this.checkContactConflict(body, id);
    const before = this.contactFields(row);
    const patch = this.contactPatch(body, before);
    row.patch = { ...(row.patch ?? {}), ...patch, updated_at: Math.max(this.now(), before.updated_at as number) };
    this.indexContact(row, before, this.contactFields(row));
    return row;
  }

  // ---------------------------------------------------------------- companies

  /** Email domain of a seeded company's staff (cached: contacts render it on every read). */
  private companyDomain(row: CompanyRow): string {
    let domain = this.domains.get(row.id);
    if (domain === undefined) {
      const name = row.gen >= 0 ? companyName(recordRandom(this.seed, S_COMPANY, row.gen)) : String(row.patch?.name ?? row.company_id);
      domain = `${slug(name).replace(/-/g, '')}.com`;
      this.domains.set(row.id, domain);
    }
    return domain;
  }

  private generatedCompany(row: CompanyRow): Json {
    const r = recordRandom(this.seed, S_COMPANY, row.gen);
    const name = companyName(r);
    const planIdx = chance(r, 0.75) ? int(r, 0, PLANS.length - 1) : -1;
    const plan = PLANS[planIdx];
    const created = row.created_at;
    const age = Math.max(1, this.anchor - created);
    const out: Json = {
      type: 'company',
      company_id: row.company_id,
      id: row.id,
      app_id: this.workspaceId,
      name,
      remote_created_at: created - int(r, 0, 3 * 365) * DAY,
      created_at: created,
      updated_at: created + Math.floor(r() * age),
      monthly_spend: plan === undefined ? 0 : [49, 299, 899, 2400][planIdx]! * int(r, 1, 6),
      session_count: int(r, 0, 5000),
    };
    if (chance(r, 0.85)) out.last_request_at = created + Math.floor(r() * age);
    if (chance(r, 0.8)) out.size = Math.round(Math.exp(r() * Math.log(5000)));
    if (chance(r, 0.85)) out.website = `https://www.${slug(name).replace(/-/g, '')}.com`;
    if (chance(r, 0.8)) out.industry = pick(r, INDUSTRIES);
    out.plan = plan === undefined ? {} : { type: 'plan', id: plan[0], name: plan[1] };
    out.custom_attributes = { region: pick(r, ['EMEA', 'NA', 'APAC', 'LATAM'] as const), ...(chance(r, 0.4) ? { account_tier: pick(r, ['Tier 1', 'Tier 2', 'Tier 3'] as const) } : {}) };
    return out;
  }

  /** A company as GET /companies/{id} returns it (unset optional fields are omitted, as Intercom does). */
  renderCompany(row: CompanyRow): Json {
    const base = row.gen >= 0 ? this.generatedCompany(row) : this.blank('companies', row);
    const f = row.patch === undefined ? base : { ...base, ...row.patch };
    const { plan, custom_attributes, ...rest } = f;
    return {
      ...rest,
      user_count: row.userCount,
      tags: { type: 'tag.list', tags: row.tagIds.map((id) => this.renderTag(this.tags.get(id) as TagRecord)) },
      segments: { type: 'segment.list', segments: [] },
      plan,
      custom_attributes,
    };
  }

  findCompanyByCompanyId(companyId: string): CompanyRow | undefined {
    const id = this.byCompanyId.get(companyId);
    return id === undefined ? undefined : this.companies.get(id);
  }

  private companyPatch(body: Json, current: Json | undefined): Json {
    const patch: Json = {};
    for (const k of ['name', 'size', 'website', 'industry', 'remote_created_at'] as const) if (body[k] !== undefined) patch[k] = body[k];
    // "Note that this will truncate floats ... 155.98 will be truncated to 155" (OpenAPI 2.14).
    if (typeof body.monthly_spend === 'number') patch.monthly_spend = Math.trunc(body.monthly_spend);
    if (typeof body.plan === 'string') {
      const known = PLANS.find(([, n]) => n.toLowerCase() === (body.plan as string).toLowerCase());
      patch.plan = { type: 'plan', id: known?.[0] ?? String(269400 + (mixSeed(...[...(body.plan as string)].map((c) => c.charCodeAt(0))) % 10000)), name: known?.[1] ?? body.plan };
    }
    if (body.custom_attributes !== undefined) patch.custom_attributes = { ...((current?.custom_attributes as Json | undefined) ?? {}), ...(body.custom_attributes as Json) };
    return patch;
  }

  /** POST /companies: "if not found via company_id, the new company will be created, if found, that company will be updated". */
  upsertCompany(body: Json): CompanyRow {
    const companyId = body.company_id;
    if (typeof companyId !== 'string' || companyId === '') throw new IntercomApiError(400, 'parameter_not_found', 'company_id not specified');
    const existing = this.findCompanyByCompanyId(companyId);
    if (existing !== undefined) return this.updateCompany(existing.id, body);
    const now = this.now();
    const row: CompanyRow = { id: this.newObjectId(now), gen: -1, company_id: companyId, created_at: now, userCount: 0, tagIds: [] };
    row.patch = { ...this.companyPatch(body, undefined), updated_at: now };
    this.companies.add(row);
    this.byCompanyId.set(companyId, row.id);
    this.listedCompanies = undefined;
    return row;
  }

  updateCompany(id: string, body: Json): CompanyRow {
    const row = this.companies.get(id);
    if (row === undefined) throw new IntercomApiError(404, 'company_not_found', 'Company Not Found');
    const before = this.renderCompany(row);
    row.patch = { ...(row.patch ?? {}), ...this.companyPatch(body, before), updated_at: Math.max(this.now(), before.updated_at as number) };
    this.listedCompanies = undefined;
    return row;
  }

  /**
   * Companies the list endpoints return: "sorted by the last_request_at field and by default is
   * ordered descending", and "the API does not include companies who have no associated users
   * in list responses" (OpenAPI 2.14, POST /companies/list).
   */
  listedCompanyRows(order: 'asc' | 'desc'): CompanyRow[] {
    if (this.listedCompanies === undefined) {
      const keyed = this.companies.rows
        .filter((c) => c.userCount > 0)
        .map((row) => ({ row, key: (this.renderCompany(row).last_request_at as number | undefined) ?? 0 }));
      keyed.sort((a, b) => b.key - a.key || (a.row.id < b.row.id ? 1 : -1));
      this.listedCompanies = keyed.map((k) => k.row);
    }
    return order === 'asc' ? [...this.listedCompanies].reverse() : this.listedCompanies;
  }

  // ---------------------------------------------------------------- conversations

  /** A conversation as GET /conversations/{id} returns it; list items have no conversation_parts. */
  renderConversation(row: ConversationRow, options: { parts?: boolean; plaintext?: boolean } = {}): Json {
    const r = recordRandom(this.seed, S_CONVERSATION, row.gen);
    const contactRow = this.contacts.get(row.contactId) as ContactRow;
    const contact = this.contactFields(contactRow);
    const contactRef = { type: 'contact', id: contactRow.id, external_id: contact.external_id ?? null };
    const contactAuthor = { type: contact.role === 'lead' ? 'lead' : 'user', id: contactRow.id, name: contact.name, email: contact.email ?? '' };
    const admins = this.admins.rows;
    const assignee = chance(r, 0.8) ? pick(r, admins) : undefined;
    const adminAuthor = (a: AdminRecord): Json => ({ type: 'admin', id: a.id, name: a.name, email: a.email });
    const team = chance(r, 0.7) ? pick(r, this.teams.rows) : undefined;
    const channel = chance(r, 0.7) ? 'conversation' : pick(r, ['email', 'email', 'whatsapp', 'sms', 'facebook', 'instagram'] as const);
    const deliveredAs = chance(r, 0.78) ? 'customer_initiated' : chance(r, 0.6) ? 'admin_initiated' : 'automated';
    const messageIdx = int(r, 0, MESSAGES.length - 1);
    const created = row.created_at;
    const opener = deliveredAs === 'customer_initiated' ? contactAuthor : adminAuthor(assignee ?? (admins[0] as AdminRecord));
    const html = (s: string): string => (options.plaintext ? s : `<p>${s}</p>`);

    // The timeline: assignment, alternating replies, maybe a close; statistics derive from it.
    const ageDays = (this.anchor - created) / DAY;
    const state = ageDays > 14 ? (chance(r, 0.9) ? 'closed' : 'open') : chance(r, 0.5) ? 'open' : chance(r, 0.3) ? 'snoozed' : 'closed';
    const parts: Json[] = [];
    let t = created;
    let partNo = 0;
    const partId = (): string => String(Number(row.id.slice(-9)) * 20 + ++partNo);
    const addPart = (partType: string, author: Json, body: string | null, extra: Json = {}): void => {
      t = Math.min(t + int(r, 60, 6 * 3600), Math.max(created, this.anchor - 60));
      parts.push({
        type: 'conversation_part',
        id: partId(),
        part_type: partType,
        body,
        created_at: t,
        updated_at: t,
        notified_at: t,
        assigned_to: null,
        author,
        attachments: [],
        external_id: null,
        redacted: false,
        email_message_metadata: null,
        state: 'open',
        tags: [],
        event_details: null,
        app_package_code: null,
        ...extra,
      });
    };
    let firstAssignment: number | null = null;
    let firstAdminReply: number | null = null;
    let lastAdminReply: number | null = null;
    let lastContactReply: number | null = deliveredAs === 'customer_initiated' ? created : null;
    let firstContactReply: number | null = lastContactReply;
    if (assignee !== undefined) {
      addPart('assignment', adminAuthor(assignee), null, { assigned_to: { type: 'admin', id: assignee.id } });
      firstAssignment = t;
    }
    const exchanges = int(r, 0, 3);
    for (let i = 0; i < exchanges; i++) {
      const admin = assignee ?? pick(r, admins);
      addPart('comment', adminAuthor(admin), html(pick(r, REPLIES.slice(0, 7))));
      firstAdminReply ??= t;
      lastAdminReply = t;
      if (chance(r, 0.7)) {
        addPart('comment', contactAuthor, html(pick(r, REPLIES.slice(7))));
        firstContactReply ??= t;
        lastContactReply = t;
      }
    }
    let closedAt: number | null = null;
    let closer: AdminRecord | undefined;
    if (state === 'closed') {
      closer = assignee ?? pick(r, admins);
      addPart('close', adminAuthor(closer), null, { state: 'closed' });
      closedAt = t;
    } else if (state === 'snoozed') {
      addPart('snoozed', adminAuthor(assignee ?? pick(r, admins)), null, { state: 'snoozed' });
    }
    const updated = t;
    const participants = [...new Set(parts.map((p) => (p.author as Json).type === 'admin' ? ((p.author as Json).id as string) : '').filter((id) => id !== ''))];
    const tagN = chance(r, 0.3) ? int(r, 1, 2) : 0;
    const tags = Array.from({ length: tagN }, () => pick(r, this.tags.rows)).filter((tag, i, all) => all.indexOf(tag) === i);
    const rated = state === 'closed' && chance(r, 0.35);
    const aiAgent = chance(r, 0.25);
    const waiting = state === 'open' && lastContactReply !== null && (lastAdminReply === null || lastContactReply > lastAdminReply);
    const conversation: Json = {
      type: 'conversation',
      id: row.id,
      created_at: created,
      updated_at: updated,
      waiting_since: waiting ? lastContactReply : null,
      snoozed_until: state === 'snoozed' ? this.anchor + int(r, 1, 120) * 3600 : null,
      source: {
        type: channel,
        id: String(403918000 + row.gen),
        delivered_as: deliveredAs,
        subject: channel === 'email' ? SUBJECTS[messageIdx % SUBJECTS.length] : '',
        body: html(MESSAGES[messageIdx] as string),
        author: opener,
        attachments: [],
        url: channel === 'conversation' && chance(r, 0.5) ? pick(r, ['https://app.acme.example/settings/billing', 'https://app.acme.example/dashboard', 'https://www.acme.example/pricing'] as const) : null,
        redacted: false,
      },
      contacts: { type: 'contact.list', contacts: [contactRef] },
      first_contact_reply: firstContactReply === null ? null : { created_at: firstContactReply, type: channel === 'email' ? 'email' : 'conversation', url: null },
      admin_assignee_id: assignee === undefined ? null : Number(assignee.id),
      team_assignee_id: team === undefined ? null : Number(team.id),
      open: state !== 'closed',
      state,
      read: state === 'closed' || chance(r, 0.6),
      tags: {
        type: 'tag.list',
        tags: tags.map((tag) => ({ type: 'tag', id: tag.id, name: tag.name, applied_at: created + int(r, 60, 3600), applied_by: { type: 'admin', id: (assignee ?? (admins[0] as AdminRecord)).id } })),
      },
      priority: chance(r, 0.15) ? 'priority' : 'not_priority',
      sla_applied: chance(r, 0.15) ? { type: 'conversation_sla_summary', sla_name: 'VIP first response', sla_status: pick(r, ['hit', 'missed', 'active'] as const) } : null,
      // Intercom types these statistics as integers; a milestone not reached yet is left out.
      statistics:
        parts.length === 0
          ? null
          : withoutNulls({
              type: 'conversation_statistics',
              time_to_assignment: firstAssignment === null ? null : firstAssignment - created,
              time_to_admin_reply: firstAdminReply === null ? null : firstAdminReply - created,
              time_to_first_close: closedAt === null ? null : closedAt - created,
              time_to_last_close: closedAt === null ? null : closedAt - created,
              median_time_to_reply: firstAdminReply === null ? null : firstAdminReply - created,
              first_contact_reply_at: firstContactReply,
              first_assignment_at: firstAssignment,
              first_admin_reply_at: firstAdminReply,
              first_close_at: closedAt,
              last_assignment_at: firstAssignment,
              last_assignment_admin_reply_at: firstAdminReply,
              last_contact_reply_at: lastContactReply,
              last_admin_reply_at: lastAdminReply,
              last_close_at: closedAt,
              last_closed_by_id: closer?.id ?? null,
              count_reopens: 0,
              count_assignments: firstAssignment === null ? 0 : 1,
              count_conversation_parts: parts.length + 1,
            }),
      conversation_rating: rated
        ? {
            rating: pick(r, [5, 5, 5, 4, 4, 3, 2, 1] as const),
            remark: chance(r, 0.5) ? pick(r, ['Super helpful, thanks!', 'Quick and friendly.', 'Took a while but solved it.', 'Not resolved.'] as const) : '',
            created_at: (closedAt ?? updated) + int(r, 60, 7200),
            updated_at: (closedAt ?? updated) + int(r, 60, 7200),
            contact: contactRef,
            teammate: { type: 'admin', id: (closer ?? (admins[0] as AdminRecord)).id },
          }
        : null,
      teammates: participants.length === 0 ? null : { type: 'admin.list', teammates: participants.map((id) => ({ type: 'admin', id })) },
      title: chance(r, 0.3) ? SUBJECTS[messageIdx % SUBJECTS.length] : null,
      custom_attributes: { 'Issue type': pick(r, ['Billing', 'Bug', 'Question', 'Feature request', 'Account'] as const), 'Product area': pick(r, ['Dashboard', 'Integrations', 'Mobile app', 'API'] as const) },
      topics: {},
      ticket: null,
      linked_objects: { type: 'list', data: [], total_count: 0, has_more: false },
      ai_agent: aiAgent
        ? {
            source_type: 'workflow',
            source_title: 'Fin answers first',
            last_answer_type: pick(r, ['ai_answer', 'custom_answer'] as const),
            resolution_state: pick(r, ['assumed_resolution', 'confirmed_resolution', 'routed_to_team', 'abandoned'] as const),
            rating: null,
            rating_remark: null,
            created_at: created,
            updated_at: created + int(r, 30, 600),
          }
        : null,
      ai_agent_participated: aiAgent,
    };
    if (options.parts) conversation.conversation_parts = { type: 'conversation_part.list', conversation_parts: parts, total_count: parts.length };
    return conversation;
  }

  // ---------------------------------------------------------------- small tables

  /**
   * An admin as /admins returns it. With display_avatar the avatar is the image URL: the admin
   * schema types it `string, format: uri` (GET /me, whose schema differs, returns an object).
   */
  renderAdmin(a: AdminRecord, options: { avatar?: boolean } = {}): Json {
    const { avatar, email_verified, ...rest } = a;
    void email_verified;
    return { ...rest, ...(options.avatar ? { avatar: avatar.image_url } : {}) };
  }

  /** GET /me: the token's admin with the workspace ("app"). */
  renderMe(): Json {
    const a = this.admins.rows[0] as AdminRecord;
    return {
      type: 'admin',
      id: a.id,
      email: a.email,
      name: a.name,
      email_verified: a.email_verified,
      app: {
        type: 'app',
        id_code: this.workspaceId,
        name: this.appName,
        created_at: this.anchor - 4 * 365 * DAY,
        secure: false,
        identity_verification: false,
        timezone: 'Europe/Dublin',
        region: 'US',
      },
      avatar: a.avatar,
      has_inbox_seat: a.has_inbox_seat,
    };
  }

  renderTeam(t: TeamRecord): Json {
    return { ...t };
  }

  renderTag(t: TagRecord): Json {
    return { type: 'tag', id: t.id, name: t.name };
  }

  renderSegment(s: SegmentRecord, includeCount: boolean): Json {
    const { rule, ...rest } = s;
    void rule;
    const i = this.segments.position(s.id);
    return includeCount ? { ...rest, count: this.segmentCounts[i] ?? 0 } : rest;
  }

  renderNote(n: NoteRecord): Json {
    const a = this.admins.get(n.authorId) as AdminRecord;
    return {
      type: 'note',
      id: n.id,
      created_at: n.created_at,
      contact: n.contact,
      author: { type: 'admin', id: a.id, name: a.name, email: a.email, away_mode_enabled: a.away_mode_enabled, away_mode_reassign: a.away_mode_reassign },
      body: n.body,
    };
  }

  renderInternalArticle(a: InternalArticleRecord): Json {
    return { ...a };
  }

  /** POST /tags with a name: "created if not found, or the new name for the tag if this is an update request" (by id). */
  upsertTag(body: { name: string; id?: string }): TagRecord {
    if (body.id !== undefined) {
      const tag = this.tags.get(body.id);
      if (tag === undefined) throw new IntercomApiError(404, 'tag_not_found', 'Tag not found');
      tag.name = body.name;
      return tag;
    }
    // "Names are case insensitive."
    const existing = this.tags.rows.find((t) => t.name.toLowerCase() === body.name.toLowerCase());
    if (existing !== undefined) return existing;
    return this.tags.add({ type: 'tag', id: String(101 + this.nextTagId++), name: body.name });
  }

  /** Tag (or untag) companies, by Intercom id or company_id. */
  tagCompanies(tag: TagRecord, companies: { id?: string; company_id?: string; untag?: boolean }[]): void {
    const rows = companies.map((c) => {
      const row = c.id !== undefined ? this.companies.get(c.id) : c.company_id !== undefined ? this.findCompanyByCompanyId(c.company_id) : undefined;
      if (row === undefined) throw new IntercomApiError(404, 'company_not_found', 'Company Not Found');
      return { row, untag: c.untag === true };
    });
    for (const { row, untag } of rows) {
      row.tagIds = row.tagIds.filter((id) => id !== tag.id);
      if (!untag) row.tagIds.push(tag.id);
    }
  }

  tagContacts(tag: TagRecord, users: { id?: string }[]): void {
    const rows = users.map((u) => {
      const row = u.id === undefined ? undefined : this.contacts.get(u.id);
      if (row === undefined) throw new IntercomApiError(404, 'not_found', 'User Not Found');
      return row;
    });
    for (const row of rows) if (!row.tagIds.includes(tag.id)) row.tagIds.push(tag.id);
  }

  createNote(contactId: string, body: { body: string; admin_id?: string | number }): NoteRecord {
    const contact = this.contacts.get(contactId);
    if (contact === undefined) throw new IntercomApiError(404, 'not_found', 'User Not Found');
    const authorId = body.admin_id === undefined ? (this.admins.rows[0] as AdminRecord).id : String(body.admin_id);
    if (this.admins.get(authorId) === undefined) throw new IntercomApiError(404, 'not_found', 'Resource Not Found');
    const note = this.notes.add({
      type: 'note',
      id: String(1 + this.nextNoteId++),
      created_at: this.now(),
      contact: { type: 'contact', id: contactId },
      authorId,
      body: htmlBody(body.body),
    });
    contact.noteIds.push(note.id);
    return note;
  }

  createInternalArticle(body: { title: string; body?: string; owner_id: number; author_id: number }): InternalArticleRecord {
    const now = this.now();
    return this.internalArticles.add({
      type: 'internal_article',
      id: String(1001 + this.nextArticleId++),
      title: body.title,
      body: body.body ?? null,
      owner_id: body.owner_id,
      author_id: body.author_id,
      created_at: now,
      updated_at: now,
      locale: 'en',
    });
  }

  /** Record counts per table. */
  counts(): Record<string, number> {
    return {
      admins: this.admins.size,
      teams: this.teams.size,
      tags: this.tags.size,
      segments: this.segments.size,
      companies: this.companies.size,
      contacts: this.contacts.size,
      conversations: this.conversations.size,
      notes: this.notes.size,
      internal_articles: this.internalArticles.size,
    };
  }
}
