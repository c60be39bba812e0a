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
import { contactOf, type ContactRow } from './contacts.ts';
import { conversationOf, type ConversationRow } from './conversations.ts';
import { chance, companyName, emailLocal, int, INTERCOM_SIDECAR, objectId, personName, pool, recordRandom, slug, type Json, type Rand } from './data.ts';

const DAY = 86_400;
/** Seeded data ends here (2026-10-30T17:00:00Z), so it is identical whatever the wall clock. */
export const DEFAULT_ANCHOR = Date.UTC(2026, 9, 30, 17) / 1000;
const SIZE_MAX = 100_000;
// Salts of the per-record PRNG streams (contacts 1 and conversations 3 are theirs).
const [S_COMPANY, S_STRUCTURE, S_SMALL] = [2, 4, 5];

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

const kept = (rows: Json[], parents: (r: Json) => Record<string, string> = () => ({})): Map<string, StoredEntry> =>
  new Map(rows.map((r) => [String(r.id), { record: r, parents: parents(r) }]));

type CompanyRow = { id: string; gen: number; created_at: number; users: number; tagIds: string[] };

export function seedWorkspace(seed: number, size: number, anchor: number): Workspace {
  if (!Number.isInteger(size) || size < 0 || size > SIZE_MAX) throw new RangeError(`size must be an integer from 0 to ${SIZE_MAX}, got ${size}`);
  const idRand = seededRandom(mixSeed(seed, 0x1d));
  let idCounter = 0;
  const newObjectId = (t: number): string => objectId(idRand, t, idCounter++);
  const rand = seededRandom(mixSeed(seed, S_SMALL));
  const workspaceId = Array.from({ length: 8 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(rand() * 36)]).join('');
  const start = anchor - 3 * 365 * DAY;
  const { admins, avatars } = seedAdmins(rand);
  const teams = seedTeams(rand, admins);
  const tags = pool<string>('tag_names').map((name, i): Json => ({ type: 'tag', id: String(101 + i), name }));
  const { segments, segmentRules } = seedSegments(rand, newObjectId, start, anchor);
  const articles = seedArticles(rand, admins, start, anchor);
  // The big tables' structure: companies first (contacts point at them and make up their user_count).
  const structure = seededRandom(mixSeed(seed, S_STRUCTURE));
  const span = Math.max(2 * 365 * DAY, size * 600);
  const companyRows = seedCompanyRows(structure, newObjectId, size, anchor - span - 365 * DAY, span, tags);
  const contactRows = seedContactRows(structure, newObjectId, size, anchor - span, span, companyRows, tags);
  const contactIds = [...contactRows.keys()];
  const conversationRows = seedConversationRows(structure, contactRows, contactIds, size, anchor);
  const notes = seedNotes(structure, contactRows, contactIds, admins, size, anchor);
  const { companies, domains } = seedCompanies(seed, anchor, workspaceId, companyRows, tags);
  const contacts = new LazyRecords(contactIds, (id) => contactOf({ seed, anchor, workspaceId, admins, domains }, id, contactRows.get(id) as ContactRow));
  const sources = { seed, anchor, admins, teams, tags, contacts };
  const conversation = (id: string, plaintext: boolean): Json | undefined => {
    const row = conversationRows.get(id);
    return row === undefined ? undefined : conversationOf(sources, row, plaintext);
  };
  const conversations = new LazyRecords([...conversationRows.keys()], (id) => conversationOf(sources, conversationRows.get(id) as ConversationRow, false));

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

/** Admins: numeric ids in Intercom's range; the first one owns the access token (GET /me). */
function seedAdmins(rand: Rand): { admins: Json[]; avatars: Map<string, string | null> } {
  const admins: Json[] = [];
  const avatars = new Map<string, string | null>();
  for (let i = 0; i < 12; i++) {
    const { first, last } = personName(rand);
    const id = String(991267401 + i * 7 + int(rand, 0, 6));
    const [name, email, jobTitle] = [
      `${first} ${last}`,
      `${emailLocal(first, last)}@switchboard-sandbox.example`,
      pick(rand, pool<string>('admin_job_titles')),
    ];
    admins.push({
      type: 'admin',
      id,
      name,
      email,
      job_title: jobTitle,
      away_mode_enabled: chance(rand, 0.15),
      away_mode_reassign: chance(rand, 0.1),
      away_status_reason_id: null,
      has_inbox_seat: i < 10,
      team_ids: [],
    });
    avatars.set(id, chance(rand, 0.7) ? `https://static.intercomassets.com/avatars/${7000000 + i}/square_128/${slug(first)}.jpg` : null);
  }
  return { admins, avatars };
}

function seedTeams(rand: Rand, admins: Json[]): Json[] {
  const adminIds = admins.map((a) => Number(a.id));
  return pool<string>('team_names')
    .slice(0, 5)
    .map((name, i): Json => {
      const members = adminIds.filter(() => chance(rand, 0.35));
      if (members.length === 0) members.push(adminIds[i] as number);
      const id = String(5017691 + i);
      for (const a of admins) if (members.includes(Number(a.id))) (a.team_ids as number[]).push(Number(id));
      const limit = chance(rand, 0.5) ? int(rand, 5, 20) : null;
      return {
        type: 'team',
        id,
        name,
        admin_ids: members,
        admin_priority_level: { primary_admin_ids: members.slice(0, 1), secondary_admin_ids: members.slice(1) },
        assignment_limit: limit,
        distribution_method: pick(rand, ['round_robin', 'balanced'] as const),
      };
    });
}

/** Membership rules are search queries (the sidecar's segments pool), read with the contact search rule's operators. */
function seedSegments(
  rand: Rand,
  newObjectId: (t: number) => string,
  start: number,
  anchor: number,
): { segments: Json[]; segmentRules: Map<string, (contact: Json) => boolean> } {
  const { allowed: _allowed, ...searchRule } = INTERCOM_SIDECAR.search?.['POST /contacts/search'] as SearchRule;
  const atAnchor = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(atAnchor)
      : v !== null && typeof v === 'object'
        ? 'days_ago' in v
          ? anchor - (v as { days_ago: number }).days_ago * DAY
          : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, atAnchor(x)]))
        : v;
  const segmentRules = new Map<string, (contact: Json) => boolean>();
  const segments = pool<[string, string, unknown]>('segments').map(([name, personType, tree]): Json => {
    const created = start + int(rand, 0, 200) * DAY;
    const id = newObjectId(created);
    segmentRules.set(id, compileFilter(searchRule, atAnchor(tree), undefined));
    return { type: 'segment', id, name, created_at: created, updated_at: created + int(rand, 0, 400) * DAY, person_type: personType };
  });
  return { segments, segmentRules };
}

function seedArticles(rand: Rand, admins: Json[], start: number, anchor: number): Json[] {
  return pool<string>('article_titles').map((title, i): Json => {
    const created = start + int(rand, 0, 1000) * DAY;
    const author = pick(rand, admins);
    const body = `<p>${title}: internal guidance for the support team.</p><p>${pick(rand, pool<string>('replies'))}</p>`;
    const owner = Number(pick(rand, admins).id);
    return {
      type: 'internal_article',
      id: String(1001 + i),
      title,
      body,
      owner_id: owner,
      author_id: Number(author.id),
      created_at: created,
      updated_at: Math.min(anchor, created + int(rand, 0, 90) * DAY),
      locale: 'en',
    };
  });
}

function seedCompanyRows(structure: Rand, newObjectId: (t: number) => string, size: number, companyStart: number, span: number, tags: Json[]): CompanyRow[] {
  const companyCount = size === 0 ? 0 : Math.max(10, Math.round(size / 5));
  const companyGap = companyCount > 0 ? (span + 300 * DAY) / companyCount : 0;
  return Array.from({ length: companyCount }, (_, gen) => {
    const created = Math.floor(companyStart + gen * companyGap + structure() * companyGap * 0.9);
    const row: CompanyRow = { id: newObjectId(created), gen, created_at: created, users: 0, tagIds: [] };
    if (chance(structure, 0.25)) row.tagIds.push((tags[int(structure, 0, tags.length - 1)] as Json).id as string);
    return row;
  });
}

function seedContactRows(
  structure: Rand,
  newObjectId: (t: number) => string,
  size: number,
  contactStart: number,
  span: number,
  companyRows: CompanyRow[],
  tags: Json[],
): Map<string, ContactRow> {
  const companyCount = companyRows.length;
  const companyIndex = new Map(companyRows.map((c) => [c.id, c]));
  const contactRows = new Map<string, ContactRow>();
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
    for (const c of row.companyIds) (companyIndex.get(c) as CompanyRow).users++;
    contactRows.set(newObjectId(created), row);
  }
  return contactRows;
}

/** Conversations: each with one contact, started after the contact was created; ids grow with time. */
function seedConversationRows(
  structure: Rand,
  contactRows: Map<string, ContactRow>,
  contactIds: string[],
  size: number,
  anchor: number,
): Map<string, ConversationRow> {
  const convs = Array.from({ length: Math.round(size / 2) }, (_, gen) => {
    const contactId = contactIds[Math.floor(structure() * size)] as string;
    const c = contactRows.get(contactId) as ContactRow;
    return { gen, created_at: c.created_at + Math.floor(structure() * Math.max(1, anchor - DAY - c.created_at)), contactId };
  }).sort((a, b) => a.created_at - b.created_at || a.gen - b.gen);
  return new Map(
    convs.map((c, i): [string, ConversationRow] => {
      const id = String(215468000000000 + i * 100 + int(structure, 0, 99));
      return [id, { ...c, id }];
    }),
  );
}

function seedNotes(structure: Rand, contactRows: Map<string, ContactRow>, contactIds: string[], admins: Json[], size: number, anchor: number): Json[] {
  return Array.from({ length: Math.round(size * 0.3) }, () => {
    const contactId = contactIds[Math.floor(structure() * size)] as string;
    const c = contactRows.get(contactId) as ContactRow;
    return { created: c.created_at + Math.floor(structure() * Math.max(1, anchor - c.created_at)), contactId };
  })
    .sort((a, b) => a.created - b.created)
    .map((n, i): Json => {
      const a = pick(structure, admins);
      (contactRows.get(n.contactId) as ContactRow).noteIds.push(String(i + 1));
      const author = {
        type: 'admin',
        id: a.id,
        name: a.name,
        email: a.email,
        away_mode_enabled: a.away_mode_enabled,
        away_mode_reassign: a.away_mode_reassign,
      };
      return {
        type: 'note',
        id: String(i + 1),
        created_at: n.created,
        contact: { type: 'contact', id: n.contactId },
        author,
        body: `<p>${pick(structure, pool<string>('note_bodies'))}</p>`,
      };
    });
}

/** Companies, whole (at most 20 000): unset optional fields are left out, as Intercom does. */
function seedCompanies(
  seed: number,
  anchor: number,
  workspaceId: string,
  companyRows: CompanyRow[],
  tags: Json[],
): { companies: Json[]; domains: Map<string, string> } {
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
    const custom = {
      region: pick(r, ['EMEA', 'NA', 'APAC', 'LATAM'] as const),
      ...(chance(r, 0.4) ? { account_tier: pick(r, ['Tier 1', 'Tier 2', 'Tier 3'] as const) } : {}),
    };
    const tagList = row.tagIds.map((id) => ({ ...tags.find((t) => t.id === id) }));
    return {
      ...out,
      user_count: row.users,
      tags: { type: 'tag.list', tags: tagList },
      segments: { type: 'segment.list', segments: [] },
      plan: plan === undefined ? {} : { type: 'plan', id: plan[0], name: plan[1] },
      custom_attributes: custom,
    };
  });
  return { companies, domains };
}
