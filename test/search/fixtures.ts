/** Search test data: an entity definition covering every search type, hand-made records, and seeded random data and queries. */
import type { SearchEntityDef } from '../../src/search/index.ts';
import { seededRandom } from '../../src/simulator/sim-server.ts';

export const DEF: SearchEntityDef = {
  primaryKey: 'id',
  fields: {
    id: 'string',
    name: 'string',
    email: 'string',
    title: 'string',
    age: 'integer',
    score: 'number',
    active: 'boolean',
    created_at: 'integer',
    tags: 'array',
    custom: 'object',
    owner: 'object',
    attendees: 'array',
  },
  // email lives elsewhere in the upstream record.
  sources: { email: 'contact.email' },
};

const LONG_A = `${'a'.repeat(600)} tail-one`;
const LONG_B = `${'a'.repeat(600)} tail-two`;

/** Hand-made records: every operator's edge cases. Order matters (it is the storage order). */
export const RECORDS: Record<string, unknown>[] = [
  {
    id: 'r01',
    name: 'John Smith',
    contact: { email: 'john.smith@example.com' },
    title: 'Head of Sales',
    age: 34,
    score: 7.5,
    active: true,
    created_at: 1_600_000_000,
    tags: ['vip', 'beta'],
    custom: { plan: 'pro', seats: 10, notes: 'Renewal next quarter' },
    owner: { id: 1, name: 'Ada' },
    attendees: [
      { email: 'ada@example.com', role: 'host', seats: 3 },
      { email: 'bob@example.com', role: 'guest', seats: 1 },
    ],
  },
  {
    id: 'r02',
    name: 'Jane Smyth',
    contact: { email: 'jane@example.org' },
    title: 'CTO',
    age: 41,
    score: 9,
    active: false,
    created_at: 1_610_000_000,
    tags: ['beta'],
    custom: { plan: 'free', seats: 1 },
    owner: { id: 2, name: 'Grace' },
    attendees: [{ email: 'bob@example.com', role: 'host', seats: 2, tags: ['x', 'y'] }],
  },
  {
    id: 'r03',
    name: 'Bob',
    contact: { email: 'BOB@EXAMPLE.COM' },
    title: null,
    age: null,
    score: null,
    active: null,
    created_at: 1_620_000_000,
    tags: [],
    custom: null,
    owner: null,
  },
  {
    id: 'r04',
    name: 'Zoë Ångström',
    contact: { email: 'zoe@exämple.de' },
    title: 'Ingénieure',
    age: 29,
    score: -1.25,
    active: true,
    created_at: 1_590_000_000,
    tags: ['émigré', 'VIP'],
    custom: { plan: 'pro', seats: 3, flags: { beta: true } },
    owner: { id: 1, name: 'Ada' },
    attendees: [
      { email: 'ada@example.com', role: 'guest' },
      { email: 'cy@example.com', role: 'host', seats: 5 },
    ],
  },
  {
    id: 'r05',
    name: 'Straße 東京 😀',
    contact: { email: 'tokyo@example.jp' },
    title: 'Owner',
    age: 52,
    score: 0,
    active: true,
    created_at: 1_630_000_000,
    tags: ['jp'],
    custom: { plan: 'enterprise', seats: 500 },
    owner: { id: 3, name: 'Linus' },
    attendees: [{ email: 'Ada@Example.com', role: 'host', badges: [{ kind: 'gold' }] }, 'not-an-object', { role: 'guest' }],
  },
  // Stored with search types differing from the record: numbers as strings, boolean as string.
  {
    id: 'r06',
    name: 'Percent 100% Under_score',
    contact: { email: 'odd%name_x@example.com' },
    title: 'back\\slash',
    age: '27',
    score: '3.5',
    active: 'false',
    created_at: 1_640_000_000,
    tags: ['a', 'b', 'a'],
    custom: { plan: 'pro', seats: '7' },
    owner: { id: 2, name: 'Grace' },
  },
  {
    id: 'r07',
    name: "O'Brien; DROP TABLE search_records; --",
    contact: { email: 'quote"s@example.com' },
    title: "name'; DROP TABLE records; --",
    age: 34,
    score: 7.5,
    active: false,
    created_at: 1_600_000_000,
    tags: ['sql'],
    custom: { plan: 'free' },
    owner: { id: 4, name: 'Robert Tables' },
    attendees: [[{ email: 'nested@example.com', role: 'host' }], {}],
  },
  {
    id: 'r08',
    name: 'Long One',
    contact: { email: 'long1@example.com' },
    title: LONG_A,
    age: 60,
    score: 1e6,
    active: true,
    created_at: 1_650_000_000,
    tags: [1, 2, true],
    custom: { plan: 'pro', seats: 10, nested: { deep: { deeper: 'bottom' } } },
    owner: { id: 5, name: 'Ada' },
  },
  {
    id: 'r09',
    name: 'Long Two',
    contact: { email: 'long2@example.com' },
    title: LONG_B,
    age: 61,
    score: 1e6,
    active: true,
    created_at: 1_650_000_000,
    tags: [{ k: 'x' }, { k: 'y' }],
    custom: { plan: 'pro' },
    owner: { id: 5, name: 'Ada' },
  },
  {
    id: 'r10',
    name: 'jon smith',
    contact: {},
    title: 'head of sales',
    age: 34,
    active: true,
    created_at: 1_660_000_000,
    tags: null,
    custom: { plan: 'pro', seats: 12 },
    owner: { id: 1, name: 'ada' },
  },
  {
    id: 'r11',
    name: 'Johnathan Smithers',
    contact: { email: 'j.smithers@example.com' },
    title: 'Sales',
    age: 33,
    score: 2,
    active: true,
    created_at: 1_601_000_000,
    tags: ['vip'],
    custom: { plan: 'starter', seats: 2 },
    owner: { id: 6, name: 'Ada Lovelace' },
    attendees: [],
  },
  {
    id: 'r12',
    name: 'Christopher Robinson',
    contact: { email: 'chris@example.com' },
    title: 'Engineer',
    age: 45,
    score: 4,
    active: false,
    created_at: 1_602_000_000,
    tags: ['beta', 'vip'],
    custom: { plan: 'free', seats: 0 },
    owner: { id: 1, name: 'Ada' },
  },
];

/** Seeded pseudo-random numbers in [0, 1) (the simulators' generator). */
export const rng = seededRandom;

const WORDS = [
  'alpha',
  'beta',
  'gamma',
  'delta',
  'smith',
  'smyth',
  'johnson',
  'jonson',
  'émile',
  'zoë',
  'straße',
  'ab',
  'abc',
  'sales',
  'saels',
  'engineer',
  'enginer',
  '42',
  'x1',
  'under_score',
  '100%',
  "o'neil",
];
const PLANS = ['free', 'pro', 'enterprise', 'Pro'];

/** Random records drawn from a small vocabulary, so that queries hit. */
export function randomRecords(seed: number, count: number, idPrefix = 'q'): Record<string, unknown>[] {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const maybe = <T>(p: number, v: () => T): T | null => (r() < p ? v() : null);
  const text = (n: number): string =>
    Array.from({ length: 1 + Math.floor(r() * n) }, () => (r() < 0.2 ? pick(WORDS).toUpperCase() : pick(WORDS))).join(pick([' ', '.', '-', ', ']));
  return Array.from({ length: count }, (_, i) => ({
    id: `${idPrefix}${String(i).padStart(3, '0')}`,
    name: maybe(0.9, () => text(3)),
    contact: { email: maybe(0.8, () => `${pick(WORDS)}.${pick(WORDS)}@${pick(['example.com', 'test.org'])}`) },
    title: maybe(0.7, () => text(2)),
    age: maybe(0.85, () => Math.floor(r() * 8) * 5),
    score: maybe(0.8, () => Math.round((r() * 20 - 5) * 4) / 4),
    active: maybe(0.8, () => r() < 0.5),
    created_at: maybe(0.9, () => 1_600_000_000 + Math.floor(r() * 6) * 86_400),
    tags: maybe(0.7, () => Array.from({ length: Math.floor(r() * 3) }, () => (r() < 0.8 ? pick(WORDS) : Math.floor(r() * 3)))),
    custom: maybe(0.8, () => ({
      plan: pick(PLANS),
      seats: Math.floor(r() * 4),
      ...(r() < 0.3 ? { notes: text(4) } : {}),
      ...(r() < 0.2 ? { flags: { beta: r() < 0.5 } } : {}),
    })),
    owner: maybe(0.8, () => ({ id: 1 + Math.floor(r() * 3), name: pick(['Ada', 'Grace', 'ada lovelace']) })),
    attendees: maybe(0.7, () =>
      Array.from({ length: Math.floor(r() * 4) }, () => ({
        ...(r() < 0.9 ? { email: `${pick(['ada', 'bob', 'cy'])}@${pick(['example.com', 'test.org'])}` } : {}),
        ...(r() < 0.8 ? { role: pick(['host', 'guest', 'Host']) } : {}),
        ...(r() < 0.6 ? { seats: Math.floor(r() * 4) } : {}),
        ...(r() < 0.3 ? { tags: Array.from({ length: Math.floor(r() * 3) }, () => pick(['x', 'y', 'z'])) } : {}),
      })),
    ),
  }));
}

type Json = Record<string, unknown>;

/** A random valid filter over DEF (depth ≤ 3), with values drawn from the same vocabulary. */
export function randomFilter(r: () => number, depth = 0): Json {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  if (depth < 3 && r() < 0.35) {
    const op = pick(['and', 'or', 'not'] as const);
    if (op === 'not') return { not: randomFilter(r, depth + 1) };
    return { [op]: Array.from({ length: 1 + Math.floor(r() * 3) }, () => randomFilter(r, depth + 1)) };
  }
  const word = (): string => pick(WORDS);
  const leaves: (() => Json)[] = [
    () => ({ [pick(['eq', 'neq'])]: { name: r() < 0.5 ? word() : null } }),
    () => ({ [pick(['gt', 'gte', 'lt', 'lte'])]: { name: word() } }),
    () => ({ [pick(['eq', 'neq', 'gt', 'gte', 'lt', 'lte'])]: { age: Math.floor(r() * 8) * 5 } }),
    () => ({ in: { age: [Math.floor(r() * 8) * 5, Math.floor(r() * 8) * 5] } }),
    () => ({ [pick(['gt', 'lte'])]: { score: Math.round((r() * 20 - 5) * 4) / 4 } }),
    () => ({ [pick(['eq', 'neq'])]: { active: r() < 0.2 ? null : r() < 0.5 } }),
    () => ({ keyword: { [pick(['name', 'title', 'email', 'tags', 'custom', 'custom.notes'])]: `${word()} ${r() < 0.5 ? word() : ''}` } }),
    () => ({ fuzzy: { [pick(['name', 'title', 'tags'])]: r() < 0.5 ? word() : `${word()} ${word()}` } }),
    () => ({
      like: {
        [pick(['name', 'email', 'title', 'custom.plan'])]: pick([
          '%',
          `%${word().slice(0, 3)}%`,
          `${word().slice(0, 2)}%`,
          `%${word().slice(1)}`,
          `_${word().slice(1, 4)}%`,
          '%\\%%',
          '%\\_%',
          '%.%',
        ]),
      },
    }),
    () => ({ [pick(['eq', 'neq'])]: { [pick(['custom.plan', 'tags', 'owner.name'])]: pick([...PLANS, 'Ada', 'alpha', 'beta']) } }),
    () => ({ eq: { [pick(['tags', 'owner.id', 'custom.seats'])]: Math.floor(r() * 4) } }),
    () => ({ [pick(['gt', 'lt'])]: { [pick(['custom.seats', 'owner.id'])]: Math.floor(r() * 4) } }),
    () => ({ eq: { [pick(['custom', 'custom.flags.beta'])]: r() < 0.5 } }),
    () => ({ in: { [pick(['tags', 'custom.plan'])]: [word(), pick(PLANS), 1] } }),
    () => ({ [pick(['eq', 'neq'])]: { [pick(['custom', 'tags', 'custom.notes'])]: null } }),
    () => ({ gte: { created_at: 1_600_000_000 + Math.floor(r() * 6) * 86_400 }, lt: { created_at: 1_600_000_000 + Math.floor(r() * 6) * 86_400 } }),
    () => ({ contains: { [pick(['tags', 'attendees.tags', 'attendees.role'])]: r() < 0.7 ? pick(['x', 'y', 'alpha', 'beta', 'host']) : Math.floor(r() * 3) } }),
    () => ({ any: { attendees: randomElementFilter(r, depth + 1) } }),
  ];
  return pick(leaves)();
}

/** A random condition on one attendee (an element of the attendees array). */
function randomElementFilter(r: () => number, depth: number): Json {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  if (depth < 3 && r() < 0.35) {
    const op = pick(['and', 'or', 'not'] as const);
    if (op === 'not') return { not: randomElementFilter(r, depth + 1) };
    return { [op]: Array.from({ length: 1 + Math.floor(r() * 3) }, () => randomElementFilter(r, depth + 1)) };
  }
  const leaves: (() => Json)[] = [
    () => ({ [pick(['eq', 'neq'])]: { role: r() < 0.2 ? null : pick(['host', 'guest', 'Host']) } }),
    () => ({ eq: { email: `${pick(['ada', 'bob', 'cy'])}@${pick(['example.com', 'test.org'])}` } }),
    () => ({ [pick(['gt', 'gte', 'lt', 'lte', 'eq'])]: { seats: Math.floor(r() * 4) } }),
    () => ({ like: { email: pick(['ada%', '%@test.org', '%b%']) } }),
    () => ({ keyword: { [pick(['email', 'role'])]: pick(['ada', 'host', 'example']) } }),
    () => ({ in: { role: ['host', pick(['guest', 'Host'])] } }),
    () => ({ contains: { tags: pick(['x', 'y', 'z']) } }),
  ];
  return pick(leaves)();
}

export function randomSort(r: () => number): Json[] {
  const fields = ['name', 'age', 'score', 'active', 'created_at', 'title', 'email'];
  const n = Math.floor(r() * 3);
  const chosen = [...fields].sort(() => r() - 0.5).slice(0, n);
  return chosen.map((f) => ({ [f]: r() < 0.5 ? 'asc' : 'desc' }));
}
