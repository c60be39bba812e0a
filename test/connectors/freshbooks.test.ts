/**
 * FreshBooks' quirks, end to end: connectors/freshbooks/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving our description (derived from @freshbooks/api by
 * connectors/freshbooks/derive.mjs) with its sidecar — no FreshBooks-specific simulator code. What
 * every connector shares is the conformance suite's; here: the account id from the identity endpoint
 * after OAuth consent, in every accounting path; records in {response: {result: ...}} envelopes and
 * writes in {client: {...}}; page/per_page paging until page = pages; deletes as vis_state 1, which
 * the incremental sync (search[updated_min], a day) removes from search.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runFollowUps } from '../../src/auth/index.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/freshbooks';
const manifest = getConnector('freshbooks');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Record<string, string>;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 3, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

/** The connector's own base URL (https://api.freshbooks.com/accounting/account/<id>), its host swapped for the simulator's. */
const toSim: typeof fetch = (input, init) => fetch(String(input).replace('https://api.freshbooks.com', sim.url), init);
const freshbooks = (credentials: Rec = CREDENTIALS, viaOwnUrl = false) =>
  new ConnectorRuntime(manifest, credentials, {
    ...(viaOwnUrl ? { fetch: toSim } : { baseUrl: sim.url }),
    limiter: null,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });
const run = async (entity: string, action: string, params: Rec): Promise<ListEnvelope & RecordEnvelope> =>
  (await freshbooks().execute(entity, action, params)) as ListEnvelope & RecordEnvelope;

describe('freshbooks', () => {
  it('after OAuth consent, the identity names the account (the business the user owns), which every accounting path then carries', async () => {
    const oauth = manifest.auth.find((v) => v.def.name === 'oauth')!;
    const filled = await runFollowUps(oauth, { access_token: CREDENTIALS['access_token']! }, { after: 'exchange', baseUrl: sim.url });
    expect(filled).toMatchObject({ account_id: 'zDmNq' });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/auth/api/v1/users/me' });
    const checked = await freshbooks({ access_token: CREDENTIALS['access_token']!, ...filled }, true).check();
    expect(checked).toMatchObject({ ok: true, info: { clients: 8 } });
    expect(sim.requests.at(-1)!.path).toBe('/accounting/account/zDmNq/users/clients');
    expect(sim.requests.at(-1)!.headers['authorization']).toBe(`Bearer ${CREDENTIALS['access_token']}`);
  });

  it('reads records out of {response: {result: ...}}, pages by page/per_page until page = pages, and filters by search[...]', async () => {
    for (let i = 0; i < 120; i++) sim.addRecord('clients', { organization: `Bulk ${i}`, email: `bulk${i}@example.com` });
    const first = await run('clients', 'list', { per_page: 100 });
    expect(first.data).toHaveLength(100);
    expect(first.meta).toEqual({ page: 1, pages: 2, total: 128 });
    let n = 0;
    for await (const page of freshbooks().pages('clients', { per_page: 100 })) n += page.data.length;
    expect(n).toBe(128);
    expect(sim.requests.filter((r) => r.path === '/users/clients').map((r) => r.query.get('page'))).toEqual([null, null, '2']);
    const byEmail = await run('clients', 'list', { email: 'ap@fabrikam.com' });
    expect((byEmail.data as Rec[]).map((c) => c['organization'])).toEqual(['Fabrikam Inc.']);
    expect(sim.requests.at(-1)!.query.get('search[email]')).toBe('ap@fabrikam.com');
  });

  it('creates an invoice with lines in {invoice: {...}}, marks it sent, and deletes it as vis_state 1', async () => {
    const client = ((await run('clients', 'list', {})).data as Rec[])[0]!;
    const made = await run('invoices', 'create', {
      customerid: client['id'],
      create_date: '2026-03-02',
      currency_code: 'CAD',
      lines: [{ name: 'Design sprint', qty: 2, unit_cost: { amount: '1500.00', code: 'CAD' } }],
    });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      invoice: {
        customerid: client['id'],
        create_date: '2026-03-02',
        currency_code: 'CAD',
        lines: [{ name: 'Design sprint', qty: 2, unit_cost: { amount: '1500.00', code: 'CAD' } }],
      },
    });
    const id = (made.data as Rec)['id'];
    expect(made.data).toMatchObject({ customerid: client['id'], create_date: '2026-03-02' });
    await run('invoices', 'update', { invoice_id: id, action_mark_as_sent: true });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PUT', path: `/invoices/invoices/${id}` });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ invoice: { action_mark_as_sent: true } });
    const deleted = await run('invoices', 'update', { invoice_id: id, vis_state: 1 });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ invoice: { vis_state: 1 } });
    expect(deleted.data).toMatchObject({ id, vis_state: 1 });
  });

  it("a missing record is 404 with FreshBooks' {response: {errors: [...]}}, read as upstream_not_found with its message", async () => {
    const err = await failure(run('expenses', 'get', { expense_id: 4242 }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.message).toContain('4242');
  });

  it('syncs in full, then by search[updated_min] (a day), dropping a client deleted (vis_state 1) meanwhile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'freshbooks-sync-'));
    const database = openDatabase(join(dir, 'records.db'));
    try {
      await migrate(database, [searchMigrations, syncMigrations]);
      const store = new RecordStore(database, { cursorSecret: 'freshbooks' });
      const engine = new SyncEngine({ database, sink: store, fullRefreshEvery: 10, runtimeFor: async () => ({ manifest, runtime: freshbooks() }) });
      await engine.register('freshbooks');
      const listed: Rec[] = [];
      for await (const page of freshbooks().pages('clients', { per_page: 100 })) listed.push(...(page.data as Rec[]));
      const full = await engine.runOnce('freshbooks');
      // A client already deleted (vis_state 1: the seeded Northwind Traders) is not kept.
      expect(listed.some((c) => c['vis_state'] === 1)).toBe(true);
      expect(full.entities['clients']?.records).toBe(listed.filter((c) => c['vis_state'] !== 1).length);
      const client = ((await run('clients', 'list', { email: 'ap@fabrikam.com' })).data as Rec[])[0]!;
      await run('clients', 'update', { client_id: client['id'], vis_state: 1 });
      const before = sim.requests.length;
      const again = await engine.runOnce('freshbooks');
      expect(again.full).toBe(false);
      const feed = sim.requests.slice(before).filter((r) => r.path === '/users/clients');
      expect(feed[0]!.query.get('search[updated_min]')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(again.entities['clients']?.deleted).toBe(1);
      await engine.stop();
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
