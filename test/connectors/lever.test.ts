/**
 * Lever's quirks, end to end: connectors/lever/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving our extract of Lever's API (connectors/lever/openapi.yaml)
 * with its sidecar — no Lever-specific simulator code. What every connector shares (each entity ×
 * action) is the shared conformance suite's; here: the API key as the basic user name with an empty
 * password, pages by an offset token (`next` sent back as `offset` while `hasNext`), a stage change
 * as the opportunity's update (`perform_as`), a note's create answering only its id, and the sync:
 * opportunities changed since the last run by `updated_at_start` in Unix milliseconds, interviews
 * and notes per opportunity.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/lever';
const manifest = getConnector('lever');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { api_key: string };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USER = '8d49b010-cc6a-4f40-ace5-e86061c677ed';

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 7, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const lever = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => lever().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;

describe('lever', () => {
  it('sends the API key as the basic user name with an empty password; a wrong key is refused with Lever-shaped error', async () => {
    expect(await lever().check()).toMatchObject({ ok: true, checked: true });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/opportunities' });
    expect(sent.query.get('limit')).toBe('1');
    expect(sent.headers['authorization']).toBe(`Basic ${Buffer.from(`${CREDENTIALS.api_key}:`).toString('base64')}`);
    const err = await failure(lever({ api_key: 'not-a-key' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/Invalid API key/);
  });

  it('pages by the offset token: each next sent back as offset while hasNext, no call after the last page', async () => {
    const first = await run('opportunities', 'list', { limit: 2 });
    expect(typeof first.meta?.['next_page']).toBe('string');
    const seen: Rec[] = [];
    for await (const page of lever().pages('opportunities', { limit: 2 })) seen.push(...(page.data as Rec[]));
    expect(seen.map((o) => o['name'])).toEqual(['Maya Okonkwo', 'Tom Becker', 'Lena Sørensen', 'Raj Malhotra', 'Grace Liu', 'Owen Price']);
    for (const o of seen) {
      expect(o['id']).toMatch(UUID);
      expect(Number.isInteger(o['updatedAt']) && (o['updatedAt'] as number) > 1e12).toBe(true);
    }
    const offsets = sim.requests.filter((r) => r.path === '/opportunities').map((r) => r.query.get('offset'));
    expect(offsets).toHaveLength(4);
    expect(offsets.slice(0, 2)).toEqual([null, null]);
    expect(offsets[2]).toBe(first.meta?.['next_page']);
    expect(offsets[3]).toMatch(/.+/);
  });

  it("moves an opportunity to another stage as its update, made as a Lever user; a note's create answers its id, read back under the opportunity", async () => {
    const opp = ((await run('opportunities', 'list', { limit: 1 })).data as Rec[])[0]!;
    const stage = '0b9b2e9a-8c4a-4b35-9d61-2a0d4b1bd7f3';
    const moved = (await run('opportunities', 'update', { opportunity: opp['id'], stage, perform_as: USER })).data as Rec;
    expect(moved).toMatchObject({ id: opp['id'], stage });
    const put = sim.requests.at(-1)!;
    expect(put).toMatchObject({ method: 'PUT', path: `/opportunities/${String(opp['id'])}/stage` });
    expect(put.query.get('perform_as')).toBe(USER);
    expect(((await run('opportunities', 'get', { opportunity: opp['id'] })).data as Rec)['stage']).toBe(stage);

    const note = (await run('notes', 'create', { opportunity: opp['id'], perform_as: USER, value: 'Strong referral' })).data as Rec;
    expect(note).toEqual({ id: expect.stringMatching(UUID) });
    const read = (await run('notes', 'get', { opportunity: opp['id'], note: note['id'] })).data as Rec;
    expect(read).toMatchObject({ id: note['id'] });
    const all: Rec[] = [];
    for await (const page of lever().pages('notes', { opportunity: opp['id'] })) all.push(...(page.data as Rec[]));
    expect(all.map((n) => n['id'])).toContain(note['id']);
    const missing = await failure(run('opportunities', 'get', { opportunity: '00000000-0000-4000-8000-000000000000' }));
    expect(missing.code).toBe('upstream_not_found');
  });
});

describeEachDialect('lever sync on %s', (name) => {
  let tdb: TestDatabase;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 7, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    engine = new SyncEngine({
      database: tdb.database,
      sink: new RecordStore(tdb.database, { cursorSecret: 'test' }),
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: lever(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it('reads everything once (interviews and notes per opportunity), then opportunities changed since by updated_at_start in milliseconds', async () => {
    await engine.register('lv-1');
    const first = await engine.runOnce('lv-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({ opportunities: { records: 6 }, postings: { records: 4 }, interviews: { records: 18 }, notes: { records: 18 } });
    upstream.requests.length = 0;
    const second = await engine.runOnce('lv-1');
    expect(second.full).toBe(false);
    // The opportunities' own pages carry the mark; the parents of interviews and notes are listed whole.
    const lists = upstream.requests.filter((r) => r.path === '/opportunities').map((r) => r.query.get('updated_at_start'));
    const since = lists.filter((s) => s !== null);
    expect(since.length).toBeGreaterThan(0);
    expect(since.length).toBeLessThan(lists.length);
    for (const s of since) expect(s).toMatch(/^\d{13}$/);
  }, 60_000);
});
