/**
 * The search benchmark's data (scripts/bench/search.ts): deterministic Intercom-like contacts (the
 * same index gives the same contact on every run and dialect), the search fields, the query kinds
 * measured with their hand-written equivalents, and the hand-written schema's rows.
 */
import type { SearchEntityDef } from '../../src/search/index.ts';
import { seededRandom } from '../../src/simulator/sim-server.ts';
import type { HandQuery, HandRow } from './search-baselines.ts';

/**
 * Intercom contact search fields: the ones the issue names (email, name, role, created_at,
 * updated_at, owner_id, custom_attributes) plus a few more. Records carry further fields
 * (phone, location, browser...) that are stored with the record but not searchable here.
 */
export const DEF: SearchEntityDef = {
  primaryKey: 'id',
  fields: {
    id: 'string',
    email: 'string',
    name: 'string',
    role: 'string',
    owner_id: 'integer',
    created_at: 'integer',
    updated_at: 'integer',
    last_seen_at: 'integer',
    unsubscribed_from_emails: 'boolean',
    custom_attributes: 'object',
    tags: 'object',
  },
};

// Deterministic data: the same --records gives the same contacts on every run and dialect.
const rng = seededRandom;

const FIRST = [
  'james',
  'mary',
  'john',
  'patricia',
  'robert',
  'jennifer',
  'michael',
  'linda',
  'william',
  'elizabeth',
  'david',
  'barbara',
  'richard',
  'susan',
  'joseph',
  'jessica',
  'thomas',
  'sarah',
  'charles',
  'karen',
  'christopher',
  'nancy',
  'daniel',
  'lisa',
  'matthew',
  'betty',
  'anthony',
  'margaret',
  'mark',
  'sandra',
  'donald',
  'ashley',
  'steven',
  'kimberly',
  'paul',
  'emily',
  'andrew',
  'donna',
  'joshua',
  'michelle',
  'kenneth',
  'dorothy',
  'kevin',
  'carol',
  'brian',
  'amanda',
  'george',
  'melissa',
  'edward',
  'deborah',
  'ronald',
  'stephanie',
  'timothy',
  'rebecca',
  'jason',
  'sharon',
  'jeffrey',
  'laura',
  'ryan',
  'cynthia',
  'jacob',
  'kathleen',
  'gary',
  'amy',
  'nicholas',
  'shirley',
  'eric',
  'angela',
  'jonathan',
  'helen',
  'stephen',
  'anna',
  'larry',
  'brenda',
  'justin',
  'pamela',
  'scott',
  'nicole',
  'brandon',
  'emma',
  'benjamin',
  'samantha',
  'samuel',
  'katherine',
  'gregory',
  'christine',
  'frank',
  'debra',
  'alexander',
  'rachel',
  'raymond',
  'catherine',
  'patrick',
  'carolyn',
  'jack',
  'janet',
  'dennis',
  'ruth',
  'jerry',
  'maria',
];
const LAST_ROOTS = [
  'smith',
  'johnson',
  'williams',
  'brown',
  'jones',
  'garcia',
  'miller',
  'davis',
  'rodriguez',
  'martinez',
  'hernandez',
  'lopez',
  'gonzalez',
  'wilson',
  'anderson',
  'thomas',
  'taylor',
  'moore',
  'jackson',
  'martin',
  'lee',
  'perez',
  'thompson',
  'white',
  'harris',
  'sanchez',
  'clark',
  'ramirez',
  'lewis',
  'robinson',
  'walker',
  'young',
  'allen',
  'king',
  'wright',
  'scott',
  'torres',
  'nguyen',
  'hill',
  'flores',
  'green',
  'adams',
  'nelson',
  'baker',
  'hall',
  'rivera',
  'campbell',
  'mitchell',
  'carter',
  'roberts',
];
const SUFFIXES = [
  '',
  'son',
  'ford',
  'ley',
  'ton',
  'man',
  'er',
  'well',
  'wood',
  'field',
  'berg',
  'stein',
  'ski',
  'ova',
  'ez',
  'ini',
  'sen',
  'ard',
  'ette',
  'ridge',
];
// 1,000 last names: enough that a last name matches about 0.1% of contacts.
const LAST = LAST_ROOTS.flatMap((r) => SUFFIXES.map((s) => r + s));
const DOMAINS = ['gmail.com', 'yahoo.com', 'outlook.com', 'example.com', 'acme.io', 'globex.com', 'initech.net', 'umbrella.org', 'hooli.xyz', 'piedpiper.com'];
const BROWSERS = ['chrome', 'firefox', 'safari', 'edge', 'opera'];
const OSES = ['macos', 'windows', 'linux', 'ios', 'android'];
const PLACES = [
  ['United States', 'California', 'San Francisco'],
  ['United States', 'New York', 'New York'],
  ['Ireland', 'Dublin', 'Dublin'],
  ['Germany', 'Berlin', 'Berlin'],
  ['France', 'Ile-de-France', 'Paris'],
  ['Brazil', 'Sao Paulo', 'Sao Paulo'],
  ['Japan', 'Tokyo', 'Tokyo'],
  ['India', 'Karnataka', 'Bengaluru'],
  ['Australia', 'New South Wales', 'Sydney'],
  ['Canada', 'Ontario', 'Toronto'],
];
const PLANS = ['free', 'starter', 'pro', 'enterprise'];
const TAGS = ['vip', 'churn-risk', 'beta', 'newsletter', 'partner', 'trial', 'enterprise', 'support-priority'];
const NOTE_WORDS = [
  'interested',
  'in',
  'the',
  'annual',
  'plan',
  'asked',
  'about',
  'pricing',
  'integration',
  'with',
  'salesforce',
  'renewal',
  'next',
  'quarter',
  'needs',
  'onboarding',
  'call',
  'reported',
  'a',
  'bug',
  'feature',
  'request',
  'for',
  'exports',
  'happy',
  'customer',
];
const T0 = 1_514_764_800; // 2018-01-01
const SPAN = 7 * 365 * 86_400;

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

export function contact(i: number): Record<string, unknown> {
  const r = rng(i * 7919 + 17);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const first = pick(FIRST);
  const last = pick(LAST);
  const created = T0 + Math.floor(r() * SPAN);
  const place = pick(PLACES);
  const tags = TAGS.filter(() => r() < 0.1).map((name, k) => ({ type: 'tag', id: String(1000 + k), name }));
  return {
    type: 'contact',
    id: (0x10000000 + i).toString(16).padStart(24, '6'),
    workspace_id: 'bench',
    external_id: `ext-${i}`,
    role: r() < 0.7 ? 'user' : 'lead',
    email: `${first}.${last}${Math.floor(r() * 100)}@${pick(DOMAINS)}`,
    phone: `+1555${String(Math.floor(r() * 10_000_000)).padStart(7, '0')}`,
    name: `${cap(first)} ${cap(last)}`,
    owner_id: r() < 0.1 ? null : 1 + Math.floor(r() * 200),
    has_hard_bounced: r() < 0.02,
    marked_email_as_spam: false,
    unsubscribed_from_emails: r() < 0.1,
    created_at: created,
    updated_at: created + Math.floor(r() * 86_400 * 90),
    signed_up_at: r() < 0.3 ? null : created + 60,
    last_seen_at: created + Math.floor(r() * 86_400 * 200),
    browser: pick(BROWSERS),
    os: pick(OSES),
    location: { type: 'location', country: place[0], region: place[1], city: place[2] },
    custom_attributes: {
      plan: pick(PLANS),
      seats: 1 + Math.floor(r() * 500),
      notes: Array.from({ length: 3 + Math.floor(r() * 6) }, () => pick(NOTE_WORDS)).join(' '),
    },
    tags: { type: 'list', data: tags },
  };
}

/**
 * The query kinds measured; each takes a variant number so runs do not repeat one cached value. `hand`: the same query hand-written (goal queries only).
 * `values`: the query cycles through this many values of very different costs (variant k mod values), each value's p50 printed beside the row, for information.
 */
export function benchQueries(RECORDS: number): {
  name: string;
  params: (k: number) => Record<string, unknown>;
  hand?: (k: number) => HandQuery;
  values?: { count: number; label: (k: number) => string };
}[] {
  return [
    {
      name: 'eq (email)',
      params: (k) => ({ query: { filter: { eq: { email: String(contact((k * 9973) % RECORDS)['email']) } } } }),
      hand: (k) => ({ kind: 'eq', email: String(contact((k * 9973) % RECORDS)['email']), limit: 1000 }),
    },
    {
      name: 'range + sort (created_at)',
      params: (k) => ({
        query: {
          filter: { gte: { created_at: T0 + ((k * 37) % 300) * 86_400 }, lt: { created_at: T0 + ((k * 37) % 300) * 86_400 + 30 * 86_400 } },
          sort: [{ created_at: 'desc' }],
        },
        limit: 100,
      }),
      hand: (k) => ({ kind: 'range', from: T0 + ((k * 37) % 300) * 86_400, to: T0 + ((k * 37) % 300) * 86_400 + 30 * 86_400, limit: 100 }),
    },
    {
      name: 'in (owner_id)',
      params: (k) => ({ query: { filter: { in: { owner_id: [1 + (k % 200), 1 + ((k + 50) % 200), 1 + ((k + 100) % 200)] } } }, limit: 100 }),
      hand: (k) => ({ kind: 'in', owners: [1 + (k % 200), 1 + ((k + 50) % 200), 1 + ((k + 100) % 200)], limit: 100 }),
    },
    {
      name: 'like (name %x%)',
      params: (k) => ({ query: { filter: { like: { name: `%${LAST[(k * 13) % LAST.length]}%` } } }, limit: 100 }),
      hand: (k) => ({ kind: 'like', pattern: `%${LAST[(k * 13) % LAST.length]}%`, limit: 100 }),
    },
    {
      name: 'keyword (name)',
      params: (k) => ({ query: { filter: { keyword: { name: LAST[(k * 29) % LAST.length]! } } }, limit: 100 }),
      hand: (k) => ({ kind: 'keyword', word: LAST[(k * 29) % LAST.length]!, limit: 100 }),
    },
    {
      name: 'fuzzy (name, 1 typo)',
      params: (k) => ({ query: { filter: { fuzzy: { name: typo(LAST[(k * 31) % LAST.length]!) } } }, limit: 100 }),
      hand: (k) => ({ kind: 'fuzzy', word: typo(LAST[(k * 31) % LAST.length]!), limit: 100 }),
    },
    {
      name: 'nested and/or/not',
      params: (k) => ({
        query: {
          filter: {
            and: [
              { or: [{ eq: { 'custom_attributes.plan': PLANS[k % 4]! } }, { eq: { 'tags.data.name': TAGS[k % TAGS.length]! } }] },
              { eq: { role: 'lead' } },
              { not: { eq: { unsubscribed_from_emails: true } } },
              { gte: { last_seen_at: T0 + ((k * 53) % 1500) * 86_400 } },
            ],
          },
          sort: [{ last_seen_at: 'asc' }],
        },
        limit: 100,
      }),
      hand: (k) => ({ kind: 'nested', plan: PLANS[k % 4]!, tag: TAGS[k % TAGS.length]!, since: T0 + ((k * 53) % 1500) * 86_400, limit: 100 }),
    },
    {
      name: 'contains (tags)',
      params: (k) => ({ query: { filter: { contains: { 'tags.data.name': TAGS[k % TAGS.length]! } } }, limit: 100 }),
      hand: (k) => ({ kind: 'contains', tag: TAGS[k % TAGS.length]!, limit: 100 }),
    },
    {
      name: 'any (tags element)',
      params: (k) => ({
        query: { filter: { any: { 'tags.data': { and: [{ eq: { name: TAGS[k % TAGS.length]! } }, { eq: { id: String(1000 + (k % TAGS.length)) } }] } } } },
        limit: 100,
      }),
      hand: (k) => ({ kind: 'any', name: TAGS[k % TAGS.length]!, id: String(1000 + (k % TAGS.length)), limit: 100 }),
      // A tag's id is 1000 + its position among the contact's tags: vip/1000 matches every vip
      // contact, support-priority/1007 almost none, and the rarer combinations are read to the end.
      values: { count: TAGS.length, label: (k) => `${TAGS[k % TAGS.length]}/${1000 + (k % TAGS.length)}` },
    },
  ];
}

/** The hand-written schema's row for contact i (rid i + 1: records are stored in order). */
export function handRow(i: number): HandRow {
  const c = contact(i);
  const tags = (c['tags'] as { data: { id: string; name: string }[] }).data;
  return {
    rid: i + 1,
    id: String(c['id']),
    email: String(c['email']),
    name: String(c['name']),
    role: String(c['role']),
    owner_id: c['owner_id'] as number | null,
    created_at: c['created_at'] as number,
    last_seen_at: c['last_seen_at'] as number,
    plan: String((c['custom_attributes'] as { plan: string }).plan),
    unsubscribed: c['unsubscribed_from_emails'] === true,
    tag_names: tags.map((t) => t.name),
    tags: JSON.stringify(tags.map((t) => ({ name: t.name, id: t.id }))),
    record: JSON.stringify(c),
  };
}

/** Swap two middle letters: one typo (a transposition) for the fuzzy query. */
function typo(word: string): string {
  const i = Math.floor(word.length / 2);
  return word.slice(0, i - 1) + word[i] + word[i - 1] + word.slice(i + 1);
}
