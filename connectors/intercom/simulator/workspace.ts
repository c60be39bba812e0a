/**
 * The Intercom simulator's seeded workspace: records with the relations a real workspace has,
 * handed to the generic simulator's record store (src/simulator), which then owns them: gets,
 * lists, creates, updates, uniqueness and nested notes are its rules (connectors/intercom/simulator.yaml).
 *
 * Admins, teams, tags, segments, internal articles, companies and notes are kept whole. Contacts and
 * conversations, up to 100 000 and 50 000, are LazyRecords: a row per record (identity, time,
 * relations) and the record generated from (seed, gen) whenever it is read, kept once it is written.
 * What correlates stays here: a contact's fields with each other and its company, a
 * conversation's timeline and the statistics derived from it. Vocabularies are the sidecar's `pools`.
 */
import { LazyRecords, type StoredEntry } from '../../../src/simulator/lazy-records.ts';
import { compileFilter, type SearchRule } from '../../../src/simulator/rules.ts';
import { mixSeed, pick, seededRandom } from '../../../src/simulator/sim-server.ts';
import { chance, companyName, emailLocal, int, INTERCOM_SIDECAR, objectId, personName, phoneNumber, pool, recordRandom, slug, type Json, type Rand } from './data.ts';

const DAY = 86_400;
/** Seeded data ends here (2026-10-30T17:00:00Z), so it is identical whatever the wall clock. */
export const DEFAULT_ANCHOR = Date.UTC(2026, 9, 30, 17) / 1000;
const SIZE_MAX = 100_000;
// Salts of the per-record PRNG streams.
const [S_CONTACT, S_COMPANY, S_CONVERSATION, S_STRUCTURE, S_SMALL] = [1, 2, 3, 4, 5];

interface ContactRow {
  gen: number;
  created_at: number;
  companyIds: string[];
  tagIds: string[];
  noteIds: string[];
}
interface ConversationRow {
  id: string;
  gen: number;
  created_at: number;
  contactId: string;
}

export interface Workspace {
  workspaceId: string;
  /** Every resource's records, for the generic store (`startOpenApiSimulator({records})`). */
  records: Record<string, Map<string, StoredEntry>>;
  contacts: LazyRecords;
  conversations: LazyRecords;
  /** Admins' avatar image URLs (listed only with display_avatar). */
  avatars: Map<string, string | null>;
  /** Segment membership rules (search queries of the sidecar's segments pool), by segment id. */
  segmentRules: Map<string, (contact: Json) => boolean>;
  /** A conversation with its parts, the texts as HTML or plain text. */
  conversation(id: string, plaintext: boolean): Json | undefined;
}

const kept = (rows: Json[], parents: (r: Json) => Record<string, string> = () => ({})): Map<string, StoredEntry> => new Map(rows.map((r) => [String(r.id), { record: r, parents: parents(r) }]));

export function seedWorkspace(seed: number, size: number, anchor: number): Workspace {
  if (!Number.isInteger(size) || size < 0 || size > SIZE_MAX) throw new RangeError(`size must be an integer from 0 to ${SIZE_MAX}, got ${size}`);
  const idRand = seededRandom(mixSeed(seed, 0x1d));
  let idCounter = 0;
  const newObjectId = (t: number): string => objectId(idRand, t, idCounter++);
  const rand = seededRandom(mixSeed(seed, S_SMALL));
  const workspaceId = Array.from({ length: 8 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(rand() * 36)]).join('');
  const start = anchor - 3 * 365 * DAY;

  // Admins: numeric ids in Intercom's range; the first one owns the access token (GET /me).
  const admins: Json[] = [];
  const avatars = new Map<string, string | null>();
  for (let i = 0; i < 12; i++) {
    const { first, last } = personName(rand);
    const id = String(991267401 + i * 7 + int(rand, 0, 6));
    const [name, email, jobTitle] = [`${first} ${last}`, `${emailLocal(first, last)}@switchboard-sandbox.example`, pick(rand, pool<string>('admin_job_titles'))];
    admins.push({ type: 'admin', id, name, email, job_title: jobTitle, away_mode_enabled: chance(rand, 0.15), away_mode_reassign: chance(rand, 0.1), away_status_reason_id: null, has_inbox_seat: i < 10, team_ids: [] });
    avatars.set(id, chance(rand, 0.7) ? `https://static.intercomassets.com/avatars/${7000000 + i}/square_128/${slug(first)}.jpg` : null);
  }
  const adminIds = admins.map((a) => Number(a.id));
  const teams = pool<string>('team_names')
    .slice(0, 5)
    .map((name, i): Json => {
      const members = adminIds.filter(() => chance(rand, 0.35));
      if (members.length === 0) members.push(adminIds[i] as number);
      const id = String(5017691 + i);
      for (const a of admins) if (members.includes(Number(a.id))) (a.team_ids as number[]).push(Number(id));
      const limit = chance(rand, 0.5) ? int(rand, 5, 20) : null;
      return { type: 'team', id, name, admin_ids: members, admin_priority_level: { primary_admin_ids: members.slice(0, 1), secondary_admin_ids: members.slice(1) }, assignment_limit: limit, distribution_method: pick(rand, ['round_robin', 'balanced'] as const) };
    });
  const tags = pool<string>('tag_names').map((name, i): Json => ({ type: 'tag', id: String(101 + i), name }));
  // Membership rules are search queries (the sidecar's segments pool), read with the contact search rule's operators.
  const { allowed: _allowed, ...searchRule } = INTERCOM_SIDECAR.search?.['POST /contacts/search'] as SearchRule;
  const atAnchor = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(atAnchor) : v !== null && typeof v === 'object' ? ('days_ago' in v ? anchor - (v as { days_ago: number }).days_ago * DAY : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, atAnchor(x)]))) : v;
  const segmentRules = new Map<string, (contact: Json) => boolean>();
  const segments = pool<[string, string, unknown]>('segments').map(([name, personType, tree]): Json => {
    const created = start + int(rand, 0, 200) * DAY;
    const id = newObjectId(created);
    segmentRules.set(id, compileFilter(searchRule, atAnchor(tree), undefined));
    return { type: 'segment', id, name, created_at: created, updated_at: created + int(rand, 0, 400) * DAY, person_type: personType };
  });
  const articles = pool<string>('article_titles').map((title, i): Json => {
    const created = start + int(rand, 0, 1000) * DAY;
    const author = pick(rand, admins);
    const body = `<p>${title}: internal guidance for the support team.</p><p>${pick(rand, pool<string>('replies'))}</p>`;
    const owner = Number(pick(rand, admins).id);
    return { type: 'internal_article', id: String(1001 + i), title, body, owner_id: owner, author_id: Number(author.id), created_at: created, updated_at: Math.min(anchor, created + int(rand, 0, 90) * DAY), locale: 'en' };
  });

  // The big tables' structure: companies first (contacts point at them and make up their user_count).
  const structure = seededRandom(mixSeed(seed, S_STRUCTURE));
  const companyCount = size === 0 ? 0 : Math.max(10, Math.round(size / 5));
  const span = Math.max(2 * 365 * DAY, size * 600);
  const companyStart = anchor - span - 365 * DAY;
  const companyGap = companyCount > 0 ? (span + 300 * DAY) / companyCount : 0;
  const companyRows = Array.from({ length: companyCount }, (_, gen) => {
    const created = Math.floor(companyStart + gen * companyGap + structure() * companyGap * 0.9);
    const row = { id: newObjectId(created), gen, created_at: created, users: 0, tagIds: [] as string[] };
    if (chance(structure, 0.25)) row.tagIds.push((tags[int(structure, 0, tags.length - 1)] as Json).id as string);
    return row;
  });
  const companyIndex = new Map(companyRows.map((c) => [c.id, c]));
  const contactRows = new Map<string, ContactRow>();
  const contactStart = anchor - span;
  const contactGap = size > 0 ? span / size : 0;
  for (let gen = 0; gen < size; gen++) {
    const created = Math.floor(contactStart + gen * contactGap + structure() * contactGap * 0.9);
    const row: ContactRow = { gen, created_at: created, companyIds: [], tagIds: [], noteIds: [] };
    if (companyCount > 0 && chance(structure, 0.85)) {
      row.companyIds.push(companyRows[Math.floor(structure() * companyCount)]!.id);
      if (chance(structure, 0.06)) {
        const second = companyRows[Math.floor(structure() * companyCount)]!.id;
        if (second !== row.companyIds[0]) row.companyIds.push(second);
      }
    }
    const tagN = chance(structure, 0.35) ? int(structure, 1, 3) : 0;
    for (let t = 0; t < tagN; t++) {
      const tagId = tags[Math.floor(structure() * tags.length)]!.id as string;
      if (!row.tagIds.includes(tagId)) row.tagIds.push(tagId);
    }
    for (const c of row.companyIds) (companyIndex.get(c) as (typeof companyRows)[number]).users++;
    contactRows.set(newObjectId(created), row);
  }
  const contactIds = [...contactRows.keys()];
  // Conversations: each with one contact, started after the contact was created; ids grow with time.
  const convs = Array.from({ length: Math.round(size / 2) }, (_, gen) => {
    const contactId = contactIds[Math.floor(structure() * size)] as string;
    const c = contactRows.get(contactId) as ContactRow;
    return { gen, created_at: c.created_at + Math.floor(structure() * Math.max(1, anchor - DAY - c.created_at)), contactId };
  }).sort((a, b) => a.created_at - b.created_at || a.gen - b.gen);
  const conversationRows = new Map(convs.map((c, i): [string, ConversationRow] => {
    const id = String(215468000000000 + i * 100 + int(structure, 0, 99));
    return [id, { ...c, id }];
  }));
  const notes = Array.from({ length: Math.round(size * 0.3) }, () => {
    const contactId = contactIds[Math.floor(structure() * size)] as string;
    const c = contactRows.get(contactId) as ContactRow;
    return { created: c.created_at + Math.floor(structure() * Math.max(1, anchor - c.created_at)), contactId };
  })
    .sort((a, b) => a.created - b.created)
    .map((n, i): Json => {
      const a = pick(structure, admins);
      (contactRows.get(n.contactId) as ContactRow).noteIds.push(String(i + 1));
      const author = { type: 'admin', id: a.id, name: a.name, email: a.email, away_mode_enabled: a.away_mode_enabled, away_mode_reassign: a.away_mode_reassign };
      return { type: 'note', id: String(i + 1), created_at: n.created, contact: { type: 'contact', id: n.contactId }, author, body: `<p>${pick(structure, pool<string>('note_bodies'))}</p>` };
    });

  // Companies, whole (at most 20 000): unset optional fields are left out, as Intercom does.
  const domains = new Map<string, string>();
  const plans = pool<[string, string]>('plans');
  const companies = companyRows.map((row): Json => {
    const r = recordRandom(seed, S_COMPANY, row.gen);
    const name = companyName(r);
    domains.set(row.id, `${slug(name).replace(/-/g, '')}.com`);
    const planIdx = chance(r, 0.75) ? int(r, 0, plans.length - 1) : -1;
    const plan = plans[planIdx];
    const age = Math.max(1, anchor - row.created_at);
    const out: Json = {
      type: 'company',
      company_id: `comp_${String(row.gen + 1).padStart(6, '0')}`,
      id: row.id,
      app_id: workspaceId,
      name,
      remote_created_at: row.created_at - int(r, 0, 3 * 365) * DAY,
      created_at: row.created_at,
      updated_at: row.created_at + Math.floor(r() * age),
      monthly_spend: plan === undefined ? 0 : [49, 299, 899, 2400][planIdx]! * int(r, 1, 6),
      session_count: int(r, 0, 5000),
    };
    if (chance(r, 0.85)) out.last_request_at = row.created_at + Math.floor(r() * age);
    if (chance(r, 0.8)) out.size = Math.round(Math.exp(r() * Math.log(5000)));
    if (chance(r, 0.85)) out.website = `https://www.${slug(name).replace(/-/g, '')}.com`;
    if (chance(r, 0.8)) out.industry = pick(r, pool<string>('industries'));
    const custom = { region: pick(r, ['EMEA', 'NA', 'APAC', 'LATAM'] as const), ...(chance(r, 0.4) ? { account_tier: pick(r, ['Tier 1', 'Tier 2', 'Tier 3'] as const) } : {}) };
    const tagList = row.tagIds.map((id) => ({ ...tags.find((t) => t.id === id) }));
    return { ...out, user_count: row.users, tags: { type: 'tag.list', tags: tagList }, segments: { type: 'segment.list', segments: [] }, plan: plan === undefined ? {} : { type: 'plan', id: plan[0], name: plan[1] }, custom_attributes: custom };
  });

  const contacts = new LazyRecords(contactIds, (id) => contactOf(id, contactRows.get(id) as ContactRow));
  function contactOf(id: string, row: ContactRow): Json {
    const r = recordRandom(seed, S_CONTACT, row.gen);
    const role = chance(r, 0.82) ? 'user' : 'lead';
    const { first, last } = personName(r);
    const loc = pick(r, pool<[string, string, string, string, string, string]>('locations'));
    const domain = row.companyIds[0] !== undefined && chance(r, 0.7) ? (domains.get(row.companyIds[0]) as string) : pick(r, pool<string>('email_domains'));
    const created = row.created_at;
    const age = Math.max(1, anchor - created);
    const seen = chance(r, 0.88) ? created + Math.floor(r() * age) : null;
    const at = (p: number): number | null => (chance(r, p) ? created + Math.floor(r() * age) : null);
    const [browser, versions] = pick(r, pool<[string, string[]]>('browsers'));
    const android = chance(r, 0.1);
    const ios = !android && chance(r, 0.12);
    const utm = chance(r, 0.25);
    const opened = at(0.35);
    const list = (what: string, ids: string[] = [], type = ''): Json => ({ type: 'list', data: ids.slice(0, 10).map((x) => ({ type, id: x, url: `/${what}/${x}` })), url: `/contacts/${id}/${what}`, total_count: ids.length, has_more: ids.length > 10 });
    const name = role === 'lead' && chance(r, 0.15) ? null : `${first} ${last}`;
    const signedUp = role === 'user' ? created - (chance(r, 0.3) ? int(r, 0, 400) * DAY : 0) : null;
    const updated = Math.max(created, seen ?? created, created + Math.floor(r() * age * 0.5));
    const app = (on: boolean, devices: readonly string[], versions: readonly string[], sdk: string): (string | number | null)[] =>
      on ? ['Acme Mobile', `4.${int(r, 0, 9)}.${int(r, 0, 9)}`, pick(r, devices), pick(r, versions), sdk, seen ?? created] : [null, null, null, null, null, null];
    const [androidApp, androidVersion, androidDevice, androidOs, androidSdk, androidSeen] = app(android, ['Pixel 8', 'Pixel 7a', 'Galaxy S24', 'OnePlus 12'], ['13', '14', '15'], '15.6.1');
    const [iosApp, iosVersion, iosDevice, iosOs, iosSdk, iosSeen] = app(ios, ['iPhone 15', 'iPhone 14 Pro', 'iPad Air'], ['17.5', '17.6', '18.0'], '17.2.0');
    return {
      type: 'contact',
      id,
      workspace_id: workspaceId,
      external_id: role === 'user' && chance(r, 0.9) ? `usr_${String(100000 + row.gen)}` : null,
      role,
      email: `${emailLocal(first, last)}${row.gen + 1}@${domain}`,
      phone: chance(r, 0.45) ? phoneNumber(r, loc[3]) : null,
      name,
      avatar: chance(r, 0.25) ? { type: 'avatar', image_url: `https://static.intercomassets.com/avatars/${row.gen + 1}/square_128/${slug(first)}-${slug(last)}.jpg` } : null,
      owner_id: chance(r, 0.3) ? Number(pick(r, admins).id) : null,
      social_profiles: { type: 'list', data: chance(r, 0.2) ? [{ type: 'social_profile', name: 'Twitter', url: `https://twitter.com/${emailLocal(first, last).replace('.', '_')}` }] : [] },
      has_hard_bounced: chance(r, 0.015),
      marked_email_as_spam: chance(r, 0.01),
      unsubscribed_from_emails: chance(r, 0.08),
      created_at: created,
      updated_at: Math.min(updated, anchor),
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
      os: seen !== null ? pick(r, pool<string>('operating_systems')) : null,
      location: { type: 'location', country: loc[2], region: loc[1], city: loc[0], country_code: loc[3], continent_code: loc[4] },
      android_app_name: androidApp,
      android_app_version: androidVersion,
      android_device: androidDevice,
      android_os_version: androidOs,
      android_sdk_version: androidSdk,
      android_last_seen_at: androidSeen,
      ios_app_name: iosApp,
      ios_app_version: iosVersion,
      ios_device: iosDevice,
      ios_os_version: iosOs,
      ios_sdk_version: iosSdk,
      ios_last_seen_at: iosSeen,
      custom_attributes:
        role === 'user'
          ? { plan_tier: pick(r, ['free', 'starter', 'pro', 'enterprise'] as const), seats: int(r, 1, 250), beta_user: chance(r, 0.2) }
          : { lead_source: pick(r, ['website', 'webinar', 'trade show', 'referral'] as const) },
      opted_out_subscription_types: list('subscriptions'),
      opted_in_subscription_types: list('subscriptions'),
      utm_campaign: utm ? pick(r, pool<string>('utm_campaigns')) : null,
      utm_content: utm && chance(r, 0.5) ? pick(r, ['hero_cta', 'pricing_banner', 'footer_link'] as const) : null,
      utm_medium: utm ? pick(r, pool<string>('utm_mediums')) : null,
      utm_source: utm ? pick(r, pool<string>('utm_sources')) : null,
      utm_term: utm && chance(r, 0.3) ? pick(r, ['customer messaging', 'help desk', 'live chat'] as const) : null,
      referrer: chance(r, 0.3) ? pick(r, ['https://www.google.com/', 'https://www.linkedin.com/', 'https://news.ycombinator.com/', 'https://www.g2.com/'] as const) : null,
      tags: list('tags', row.tagIds, 'tag'),
      notes: list('notes', row.noteIds, 'note'),
      companies: list('companies', row.companyIds, 'company'),
    };
  }

  const conversation = (id: string, plaintext: boolean): Json | undefined => {
    const row = conversationRows.get(id);
    return row === undefined ? undefined : conversationOf(row, plaintext);
  };
  /** A conversation as GET /conversations/{id} returns it: its timeline, and the statistics derived from it. */
  function conversationOf(row: ConversationRow, plaintext: boolean): Json {
    const r = recordRandom(seed, S_CONVERSATION, row.gen);
    const contact = contacts.peek(row.contactId) as Json;
    const contactRef = { type: 'contact', id: row.contactId, external_id: contact.external_id ?? null };
    const contactAuthor = { type: contact.role === 'lead' ? 'lead' : 'user', id: row.contactId, name: contact.name, email: contact.email ?? '' };
    const assignee = chance(r, 0.8) ? pick(r, admins) : undefined;
    const adminAuthor = (a: Json): Json => ({ type: 'admin', id: a.id, name: a.name, email: a.email });
    const team = chance(r, 0.7) ? pick(r, teams) : undefined;
    const channel = chance(r, 0.7) ? 'conversation' : pick(r, ['email', 'email', 'whatsapp', 'sms', 'facebook', 'instagram'] as const);
    const deliveredAs = chance(r, 0.78) ? 'customer_initiated' : chance(r, 0.6) ? 'admin_initiated' : 'automated';
    const [subjects, messages, replies] = [pool<string>('subjects'), pool<string>('messages'), pool<string>('replies')];
    const messageIdx = int(r, 0, messages.length - 1);
    const created = row.created_at;
    const opener = deliveredAs === 'customer_initiated' ? contactAuthor : adminAuthor(assignee ?? (admins[0] as Json));
    const html = (s: string): string => (plaintext ? s : `<p>${s}</p>`);

    // The timeline: assignment, alternating replies, maybe a close; statistics derive from it.
    const ageDays = (anchor - created) / DAY;
    const state = ageDays > 14 ? (chance(r, 0.9) ? 'closed' : 'open') : chance(r, 0.5) ? 'open' : chance(r, 0.3) ? 'snoozed' : 'closed';
    const parts: Json[] = [];
    let t = created;
    const addPart = (partType: string, author: Json, body: string | null, extra: Json = {}): void => {
      t = Math.min(t + int(r, 60, 6 * 3600), Math.max(created, anchor - 60));
      const part = { type: 'conversation_part', id: String(Number(row.id.slice(-9)) * 20 + parts.length + 1), part_type: partType, body, created_at: t, updated_at: t, notified_at: t, assigned_to: null, author, attachments: [] };
      parts.push({ ...part, external_id: null, redacted: false, email_message_metadata: null, state: 'open', tags: [], event_details: null, app_package_code: null, ...extra });
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
      addPart('comment', adminAuthor(assignee ?? pick(r, admins)), html(pick(r, replies.slice(0, 7))));
      firstAdminReply ??= t;
      lastAdminReply = t;
      if (chance(r, 0.7)) {
        addPart('comment', contactAuthor, html(pick(r, replies.slice(7))));
        firstContactReply ??= t;
        lastContactReply = t;
      }
    }
    let closedAt: number | null = null;
    let closer: Json | undefined;
    if (state === 'closed') {
      closer = assignee ?? pick(r, admins);
      addPart('close', adminAuthor(closer), null, { state: 'closed' });
      closedAt = t;
    } else if (state === 'snoozed') addPart('snoozed', adminAuthor(assignee ?? pick(r, admins)), null, { state: 'snoozed' });
    const updated = t;
    const participants = [...new Set(parts.map((p) => ((p.author as Json).type === 'admin' ? ((p.author as Json).id as string) : '')).filter((x) => x !== ''))];
    const tagN = chance(r, 0.3) ? int(r, 1, 2) : 0;
    const chosen = Array.from({ length: tagN }, () => pick(r, tags)).filter((tag, i, all) => all.indexOf(tag) === i);
    const rated = state === 'closed' && chance(r, 0.35);
    const aiAgent = chance(r, 0.25);
    const waiting = state === 'open' && lastContactReply !== null && (lastAdminReply === null || lastContactReply > lastAdminReply);
    // Intercom types these statistics as integers; a milestone not reached yet is left out.
    const since = (x: number | null): number | null => (x === null ? null : x - created);
    const statistics = {
      type: 'conversation_statistics',
      time_to_assignment: since(firstAssignment),
      time_to_admin_reply: since(firstAdminReply),
      time_to_first_close: since(closedAt),
      time_to_last_close: since(closedAt),
      median_time_to_reply: since(firstAdminReply),
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
    };
    return {
      type: 'conversation',
      id: row.id,
      created_at: created,
      updated_at: updated,
      waiting_since: waiting ? lastContactReply : null,
      snoozed_until: state === 'snoozed' ? anchor + int(r, 1, 120) * 3600 : null,
      source: {
        type: channel,
        id: String(403918000 + row.gen),
        delivered_as: deliveredAs,
        subject: channel === 'email' ? subjects[messageIdx % subjects.length] : '',
        body: html(messages[messageIdx] as string),
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
      tags: { type: 'tag.list', tags: chosen.map((tag) => ({ type: 'tag', id: tag.id, name: tag.name, applied_at: created + int(r, 60, 3600), applied_by: { type: 'admin', id: (assignee ?? (admins[0] as Json)).id } })) },
      priority: chance(r, 0.15) ? 'priority' : 'not_priority',
      sla_applied: chance(r, 0.15) ? { type: 'conversation_sla_summary', sla_name: 'VIP first response', sla_status: pick(r, ['hit', 'missed', 'active'] as const) } : null,
      statistics: parts.length === 0 ? null : Object.fromEntries(Object.entries(statistics).filter(([, v]) => v !== null)),
      conversation_rating: rated
        ? {
            rating: pick(r, [5, 5, 5, 4, 4, 3, 2, 1] as const),
            remark: chance(r, 0.5) ? pick(r, ['Super helpful, thanks!', 'Quick and friendly.', 'Took a while but solved it.', 'Not resolved.'] as const) : '',
            created_at: (closedAt ?? updated) + int(r, 60, 7200),
            updated_at: (closedAt ?? updated) + int(r, 60, 7200),
            contact: contactRef,
            teammate: { type: 'admin', id: (closer ?? (admins[0] as Json)).id },
          }
        : null,
      teammates: participants.length === 0 ? null : { type: 'admin.list', teammates: participants.map((x) => ({ type: 'admin', id: x })) },
      title: chance(r, 0.3) ? subjects[messageIdx % subjects.length] : null,
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
      conversation_parts: { type: 'conversation_part.list', conversation_parts: parts, total_count: parts.length },
    };
  }
  const conversations = new LazyRecords([...conversationRows.keys()], (id) => conversationOf(conversationRows.get(id) as ConversationRow, false));

  return {
    workspaceId,
    records: {
      admins: kept(admins),
      teams: kept(teams),
      tags: kept(tags),
      segments: kept(segments),
      internal_articles: kept(articles),
      companies: kept(companies),
      notes: kept(notes, (n) => ({ contact_id: (n.contact as Json).id as string })),
      contacts,
      conversations,
    },
    contacts,
    conversations,
    avatars,
    segmentRules,
    conversation,
  };
}
