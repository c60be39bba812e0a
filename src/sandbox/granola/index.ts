/**
 * Granola public API simulator (https://public-api.granola.ai): GET /v1/notes and
 * GET /v1/notes/{note_id}, Bearer API-key auth, cursor pagination newest first, date filters,
 * include=transcript and the published rate limit (bursts of 25 per 5 s, 5 requests/s sustained).
 *
 * Stateful: tests change upstream data with touch/remove/add and watch a sync pick it up.
 * Faults (5xx, latency, malformed bodies) come from the shared sim-server `inject`.
 *
 * Granola documents status codes but not error bodies; we answer `{ "message": "..." }`, the
 * shape Granola clients read (and the manifest's `errors.message` template looks at first).
 */
import { mixSeed, seededRandom, startSimulator, TokenBucket, type SimRequest, type SimResponse, type Simulator } from '../sim-server.ts';
import {
  generateContent,
  generateTranscript,
  granolaId,
  iso,
  makeWorkspace,
  type GranolaNote,
  type GranolaNotePatch,
  type GranolaNoteSummary,
  type Workspace,
} from './data.ts';

export type { GranolaNote, GranolaNotePatch, GranolaNoteSummary, GranolaTranscriptSegment, GranolaPerson, GranolaFolder, GranolaCalendarEvent } from './data.ts';

export interface GranolaSimulatorOptions {
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always produces the same notes, ids and API key. Default 1. */
  seed?: number | undefined;
  /** Number of notes; default 300. Content is generated lazily, so 100 000 is cheap. */
  size?: number | undefined;
  /** Requests allowed per API key; `false` disables limiting (benchmarks). Default Granola's 25 burst, 5/s. */
  rateLimit?: { burst: number; perSecond: number } | false | undefined;
  /** Use this API key instead of the seeded one. */
  apiKey?: string | undefined;
  /**
   * The newest meeting's start; the dataset is laid out backwards from it. Fixed by default so
   * data is identical on every run regardless of the wall clock.
   */
  anchor?: Date | string | number | undefined;
}

export interface GranolaSimulator extends Simulator {
  /** The API key the simulator accepts (`Authorization: Bearer <apiKey>`). */
  apiKey: string;
  seed: number;
  /** Notes currently present. */
  count(): number;
  /** Ids of the notes currently present, in list order (newest first). */
  ids(): string[];
  /** A note exactly as GET /v1/notes/{id} would return it (without auth or rate limiting). */
  note(id: string, options?: { transcript?: boolean }): GranolaNote | undefined;
  /**
   * Mark a note edited: updated_at becomes later than every other note's, optionally with new
   * field values. Throws for an unknown id.
   */
  touch(id: string, patch?: GranolaNotePatch): GranolaNote;
  /** Delete a note; false when there was none. */
  remove(id: string): boolean;
  /** Create a note that is newer than every existing one. */
  add(patch?: GranolaNotePatch): GranolaNote;
  /** Refill the rate-limit bucket (also done by `reset()`). */
  resetRateLimit(): void;
}

/** One note's mutable identity; everything else is regenerated from (seed, gen). */
interface Row {
  id: string;
  gen: number;
  /** Scheduled meeting start (ms). */
  start: number;
  created: number;
  updated: number;
  patch?: GranolaNotePatch;
}

const DEFAULT_ANCHOR = Date.parse('2026-10-30T17:00:00Z');
const DEFAULT_SIZE = 300;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const NOTE_ID = /^not_[A-Za-z0-9]{14}$/;

/** List order: newest created first, ties broken by id (descending) so the order is total. */
function cmp(a: { created: number; id: string }, b: { created: number; id: string }): number {
  return b.created - a.created || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** First index whose row sorts strictly after `key`. */
function upperBound(order: Row[], key: { created: number; id: string }): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(order[mid] as Row, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index whose row was created strictly before `ms`. */
function firstCreatedBefore(order: Row[], ms: number): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((order[mid] as Row).created >= ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Parse a filter value: a date (YYYY-MM-DD, midnight UTC) or an ISO 8601 datetime (UTC when no
 * offset is given). Returns undefined for anything else, including impossible days (02-30),
 * which Date.parse would silently roll over.
 */
function parseGranolaDate(value: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, , tz] = m;
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (day.getUTCFullYear() !== Number(y) || day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return undefined;
  if (h === undefined) return day.getTime();
  if (Number(h) > 23 || Number(mi) > 59) return undefined;
  const ms = Date.parse(tz === undefined ? `${value}Z` : value.replace(' ', 'T'));
  return Number.isNaN(ms) ? undefined : ms;
}

interface CursorState {
  created: number;
  id: string;
  /** Filters of the first request, reused when a follow-up request omits them. */
  f: Partial<Record<FilterName, number>>;
}

type FilterName = 'created_before' | 'created_after' | 'updated_after';
const FILTERS: FilterName[] = ['created_before', 'created_after', 'updated_after'];

function encodeCursor(c: CursorState): string {
  return Buffer.from(JSON.stringify({ v: 1, c: c.created, i: c.id, f: c.f })).toString('base64url');
}

function decodeCursor(s: string): CursorState | undefined {
  try {
    const o = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { v?: unknown; c?: unknown; i?: unknown; f?: unknown };
    if (o.v !== 1 || typeof o.c !== 'number' || typeof o.i !== 'string') return undefined;
    const f: CursorState['f'] = {};
    if (o.f && typeof o.f === 'object') {
      for (const k of FILTERS) {
        const v = (o.f as Record<string, unknown>)[k];
        if (typeof v === 'number') f[k] = v;
      }
    }
    return { created: o.c, id: o.i, f };
  } catch {
    return undefined;
  }
}

const error = (status: number, message: string, headers?: Record<string, string>): SimResponse => ({
  status,
  json: { message },
  ...(headers ? { headers } : {}),
});

/** Start a Granola simulator on a loopback port. */
export async function startGranolaSimulator(options: GranolaSimulatorOptions = {}): Promise<GranolaSimulator> {
  const seed = options.seed ?? 1;
  const size = options.size ?? DEFAULT_SIZE;
  if (!Number.isInteger(size) || size < 0) throw new RangeError(`size must be a non-negative integer, got ${size}`);
  const anchor = options.anchor === undefined ? DEFAULT_ANCHOR : new Date(options.anchor).getTime();
  if (Number.isNaN(anchor)) throw new RangeError(`anchor is not a date: ${String(options.anchor)}`);
  const ws: Workspace = makeWorkspace(seed);
  const apiKey = options.apiKey ?? granolaId(seededRandom(mixSeed(seed, 0x4b)), 'grn_') + granolaId(seededRandom(mixSeed(seed, 0x4c)), '');

  // Lay the notes out backwards from the anchor over six months (300 notes: a few per working
  // day); benchmark sizes average one note per 30 minutes so timestamps stay distinct.
  const rand = seededRandom(mixSeed(seed, 0x1d));
  const span = Math.max(180 * DAY, size * 30 * MINUTE);
  const meanGap = size > 0 ? span / size : 0;
  const order: Row[] = [];
  const byId = new Map<string, Row>();
  let t = anchor;
  for (let gen = 0; gen < size; gen++) {
    if (gen > 0) t -= meanGap * (0.2 + 1.6 * rand());
    // Squeeze each day into office hours (08:00-18:00 UTC), keeping the order within the day.
    const dayStart = Math.floor(t / DAY) * DAY;
    const start = dayStart + 8 * 60 * MINUTE + Math.floor(((t - dayStart) * (10 / 24)) / (5 * MINUTE)) * 5 * MINUTE;
    const created = start + Math.floor(rand() * 90) * 1000;
    // Notes are finalised shortly after the meeting; some are edited days later.
    let updated = created + (20 + Math.floor(rand() * 100)) * MINUTE;
    if (rand() < 0.15) updated += Math.floor(rand() * 10 * DAY);
    updated = Math.max(created, Math.min(updated, anchor + 2 * 60 * MINUTE));
    let id = granolaId(rand, 'not_');
    while (byId.has(id)) id = granolaId(rand, 'not_');
    const row: Row = { id, gen, start, created, updated: Math.floor(updated / 1000) * 1000 };
    order.push(row);
    byId.set(id, row);
  }
  order.sort(cmp);
  let nextGen = size;
  let maxUpdated = order.reduce((m, r) => Math.max(m, r.updated), 0);
  const idRand = seededRandom(mixSeed(seed, 0xadd));

  const limit = options.rateLimit === undefined ? { burst: 25, perSecond: 5 } : options.rateLimit;
  let bucket = limit ? new TokenBucket(limit.burst, limit.perSecond) : undefined;

  function render(row: Row, transcript: boolean): GranolaNote {
    const c = generateContent(seed, row.gen, row.start, ws);
    const note: GranolaNote = {
      id: row.id,
      object: 'note',
      title: c.title,
      owner: c.owner,
      created_at: iso(row.created),
      updated_at: iso(row.updated),
      web_url: c.web_url,
      calendar_event: c.calendar_event,
      attendees: c.attendees,
      folder_membership: c.folder_membership,
      summary_text: c.summary_text,
      summary_markdown: c.summary_markdown,
      ...row.patch,
    };
    if (transcript) note.transcript = generateTranscript(seed, row.gen, row.start, c);
    return note;
  }

  function summary(row: Row): GranolaNoteSummary {
    const n = render(row, false);
    return { id: n.id, object: 'note', title: n.title, owner: n.owner, created_at: n.created_at, updated_at: n.updated_at };
  }

  /** A timestamp (whole seconds) later than any existing updated_at, and not before now. */
  function nextTimestamp(floor: number): number {
    return Math.max(Math.floor(Date.now() / 1000) * 1000, floor + 1000);
  }

  function rateHeaders(): Record<string, string> {
    if (!bucket || !limit) return {};
    const remaining = bucket.remaining();
    return {
      'x-ratelimit-limit': String(limit.burst),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(Math.ceil((limit.burst - remaining) / limit.perSecond)),
    };
  }

  function listNotes(req: SimRequest): SimResponse {
    const q = req.query;
    let pageSize = 10;
    const ps = q.get('page_size');
    if (ps !== null) {
      if (!/^\d+$/.test(ps) || Number(ps) < 1 || Number(ps) > 30) return error(400, 'page_size must be an integer between 1 and 30');
      pageSize = Number(ps);
    }
    let cursor: CursorState | undefined;
    const rawCursor = q.get('cursor');
    if (rawCursor !== null && rawCursor !== '') {
      cursor = decodeCursor(rawCursor);
      if (!cursor) return error(400, 'Invalid cursor');
    }
    // Filters from this request win; a follow-up page that omits them keeps the first page's.
    const f: CursorState['f'] = { ...(cursor?.f ?? {}) };
    for (const name of FILTERS) {
      const raw = q.get(name);
      if (raw === null || raw === '') continue;
      const ms = parseGranolaDate(raw);
      if (ms === undefined) return error(400, `${name} must be a date (YYYY-MM-DD) or an ISO 8601 datetime`);
      f[name] = ms;
    }

    let i = cursor ? upperBound(order, cursor) : 0;
    if (f.created_before !== undefined) i = Math.max(i, firstCreatedBefore(order, f.created_before));
    const hits: Row[] = [];
    for (; i < order.length && hits.length <= pageSize; i++) {
      const row = order[i] as Row;
      if (f.created_after !== undefined && row.created <= f.created_after) break; // older from here on
      if (f.updated_after !== undefined && row.updated <= f.updated_after) continue;
      hits.push(row);
    }
    const hasMore = hits.length > pageSize;
    const page = hits.slice(0, pageSize);
    const last = page[page.length - 1];
    return {
      status: 200,
      json: {
        notes: page.map(summary),
        hasMore,
        cursor: hasMore && last ? encodeCursor({ created: last.created, id: last.id, f }) : null,
      },
    };
  }

  function getNote(req: SimRequest, id: string): SimResponse {
    const include = req.query.get('include');
    if (include !== null && include !== 'transcript') return error(400, 'include must be "transcript"');
    // Malformed ids are answered as not found too: no such note exists either way.
    const row = NOTE_ID.test(id) ? byId.get(id) : undefined;
    if (!row) return error(404, 'Note not found');
    return { status: 200, json: render(row, include === 'transcript') };
  }

  function handle(req: SimRequest): SimResponse {
    const auth = req.headers.authorization;
    const m = typeof auth === 'string' ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
    if (!m || m[1] !== apiKey) return error(401, 'Unauthorized - Invalid API key', { 'www-authenticate': 'Bearer' });

    if (bucket) {
      const wait = bucket.take();
      if (wait > 0) {
        return error(429, 'Too many requests', { ...rateHeaders(), 'retry-after': String(Math.max(1, Math.ceil(wait))) });
      }
    }
    const headers = rateHeaders();
    const res = route(req);
    return { ...res, headers: { ...headers, ...(res.headers ?? {}) } };
  }

  function route(req: SimRequest): SimResponse {
    const [v1, notes, id, ...rest] = req.segments;
    if (v1 !== 'v1' || notes !== 'notes' || rest.length > 0) return error(404, 'Not found');
    if (req.method !== 'GET') return error(405, 'Method not allowed', { allow: 'GET' });
    return id === undefined ? listNotes(req) : getNote(req, id);
  }

  const sim = await startSimulator(handle, { port: options.port ?? 0, ...(options.host !== undefined ? { host: options.host } : {}) });

  const resetRateLimit = (): void => {
    bucket = limit ? new TokenBucket(limit.burst, limit.perSecond) : undefined;
  };

  return {
    ...sim,
    apiKey,
    seed,
    count: () => order.length,
    ids: () => order.map((r) => r.id),
    note: (id, o) => {
      const row = byId.get(id);
      return row ? render(row, o?.transcript === true) : undefined;
    },
    touch: (id, patch) => {
      const row = byId.get(id);
      if (!row) throw new Error(`no Granola note ${id}`);
      row.updated = nextTimestamp(maxUpdated);
      maxUpdated = row.updated;
      if (patch) row.patch = { ...row.patch, ...patch };
      return render(row, false);
    },
    remove: (id) => {
      const row = byId.get(id);
      if (!row) return false;
      byId.delete(id);
      order.splice(upperBound(order, row) - 1, 1);
      return true;
    },
    add: (patch) => {
      const newest = order[0];
      const created = nextTimestamp(Math.max(newest?.created ?? 0, maxUpdated));
      let id = granolaId(idRand, 'not_');
      while (byId.has(id)) id = granolaId(idRand, 'not_');
      const row: Row = { id, gen: nextGen++, start: created, created, updated: created, ...(patch ? { patch: { ...patch } } : {}) };
      maxUpdated = Math.max(maxUpdated, created);
      order.splice(upperBound(order, row), 0, row);
      byId.set(id, row);
      return render(row, false);
    },
    resetRateLimit,
    reset: () => {
      sim.reset();
      resetRateLimit();
    },
  };
}
