/**
 * Connector health over real HTTP, on SQLite and (when configured) PostgreSQL: the credential
 * check on create (both variants) and PATCH, ?check=false, POST .../check, the status it keeps,
 * auth_failed from execute and sync, and the scheduler leaving auth_failed connectors alone.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { defaultServiceConfig } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { describeEachDialect, openApiErrors, PG_URL, startHarness, testRegistry, type Harness, type Reply } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const ONE = '/api/v1/integrations/connectors/{connector_id}';
const CHECK = '/api/v1/integrations/connectors/{connector_id}/check';
const INITIATE = '/api/v1/integrations/connectors/oauth/initiate';

function conforms(method: string, template: string, r: Reply): void {
  expect(openApiErrors(method, template, r), `${method} ${template} ${r.status} ${r.text.slice(0, 300)}`).toEqual([]);
}

/** Poll `probe` until it returns true, failing after `ms` (no fixed sleeps in assertions). */
async function until(probe: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('condition not reached before the deadline');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeEachDialect(`connector health on %s${PG_URL === undefined ? ' (PostgreSQL skipped: SWITCHBOARD_TEST_POSTGRES_URL is not set)' : ''}`, (dialect) => {
  let sandbox: Sandbox;
  let h: Harness;
  let token: string;
  let intercom: IntercomSimulator;
  const call = (method: string, path: string, body?: unknown): Promise<Reply> => h.request(method, path, { token, ...(body !== undefined ? { body } : {}) });
  const granolaCredentials = () => sandbox.connectors['granola']!.credentials;

  beforeAll(async () => {
    sandbox = await startSandbox();
    intercom = sandbox.simulators['intercom'] as unknown as IntercomSimulator;
    const registry = testRegistry();
    h = await startHarness(dialect, {
      config: { upstreamThrottle: false, connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes },
      registry,
    });
    token = await h.token(await h.createApp('org-health'));
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
  });

  it('create with a wrong key: 424 upstream_credentials_rejected with the upstream message, and no row added', async () => {
    const before = await h.snapshot();
    const r = await call('POST', CONNECTORS, { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_wrong_key_123' } });
    expect(r.status, r.text).toBe(424);
    expect(r.body).toMatchObject({
      code: 'upstream_credentials_rejected',
      detail: expect.stringContaining('Invalid API key'),
      details: { upstream_status: 401 },
    });
    expect(r.body.errors).toEqual([{ path: '/credentials', message: expect.stringContaining('Invalid API key') }]);
    expect(r.text).not.toContain('grn_wrong_key_123');
    conforms('POST', CONNECTORS, r);
    expect(await h.snapshot()).toBe(before);
  });

  it('create with the right key: 201, status active, last_checked_at set; one check request upstream', async () => {
    const sim = sandbox.simulators['granola']!;
    sim.reset();
    const r = await call('POST', CONNECTORS, { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: granolaCredentials() });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ status: 'active', last_checked_at: expect.any(String), last_error: null });
    expect(sim.requests.map((q) => q.path)).toEqual(['/v1/notes']);
    conforms('POST', CONNECTORS, r);
  });

  it('create against an unreachable upstream: 503 upstream_unavailable, nothing stored', async () => {
    const registry = testRegistry();
    const down = await startHarness(dialect, { config: { connectorTypes: { granola: { baseUrl: 'http://127.0.0.1:9' } } }, registry });
    try {
      const t = await down.token(await down.createApp('org-down'));
      const before = await down.snapshot();
      const r = await down.request('POST', CONNECTORS, {
        token: t,
        body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'k' } },
      });
      expect(r.status, r.text).toBe(503);
      expect(r.body.code).toBe('upstream_unavailable');
      conforms('POST', CONNECTORS, r);
      expect(await down.snapshot()).toBe(before);
      // ?check=false stores it without asking (operators who pre-provision).
      const unchecked = await down.request('POST', `${CONNECTORS}?check=false`, {
        token: t,
        body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'k' } },
      });
      expect(unchecked.status).toBe(201);
      expect(unchecked.body).toMatchObject({ status: 'active', last_checked_at: null });
    } finally {
      await down.close();
    }
  });

  it('PATCH of credentials is checked: rejected ones change nothing; ?check=false skips the check', async () => {
    const c = (await call('POST', CONNECTORS, { customer_name: 'p', connector_type: 'granola', name: 'g', credentials: granolaCredentials() })).body;
    const before = await h.snapshot();
    const r = await call('PATCH', `${CONNECTORS}/${c.id}`, { credentials: { api_key: 'grn_nope' } });
    expect(r.status).toBe(424);
    expect(r.body.code).toBe('upstream_credentials_rejected');
    conforms('PATCH', ONE, r);
    expect(await h.snapshot()).toBe(before);
    const skipped = await call('PATCH', `${CONNECTORS}/${c.id}?check=false`, { credentials: { api_key: 'grn_nope' } });
    expect(skipped.status).toBe(200);
    // The stored key is now wrong: the check endpoint finds out.
    const checked = await call('POST', `${CONNECTORS}/${c.id}/check`);
    expect(checked.status).toBe(200);
    expect(checked.body).toMatchObject({
      ok: false,
      error: { code: 'upstream_credentials_rejected' },
      connector: { id: c.id, status: 'auth_failed', last_error: { code: 'upstream_credentials_rejected' } },
    });
    conforms('POST', CHECK, checked);
    const listed = await call('GET', `${CONNECTORS}?status=auth_failed&customer_name=p`);
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([c.id]);
    expect((await call('GET', `${CONNECTORS}?status=active&customer_name=p`)).body.data).toEqual([]);
    conforms('GET', CONNECTORS, listed);
  });

  it('POST .../check on good credentials reports the check info and keeps the connector active', async () => {
    const c = (
      await call('POST', CONNECTORS, { customer_name: 'i', connector_type: 'intercom', name: 'i', credentials: { access_token: intercom.accessToken } })
    ).body;
    expect(c.status).toBe('active');
    const r = await call('POST', `${CONNECTORS}/${c.id}/check`);
    expect(r.status).toBe(200);
    const me = intercom.me() as { app: { id_code: string; region: string } };
    expect(r.body).toMatchObject({ ok: true, info: { app_id: me.app.id_code, region: me.app.region }, connector: { status: 'active', last_error: null } });
    conforms('POST', CHECK, r);
    expect((await call('POST', `${CONNECTORS}/00000000-0000-4000-8000-000000000000/check`)).body.code).toBe('connector_not_found');
  });

  it('variant B: the OAuth tokens are checked before the secret is consumed', async () => {
    const known = new Set(intercom.tokens);
    const init = await call('POST', INITIATE, { customer_name: 'oauth-c', connector_type: 'intercom', redirect_url: 'https://app.example.com/done' });
    expect(init.status, init.text).toBe(200);
    const consent = await h.request('GET', init.body.consent_url);
    const cb = await h.request('GET', consent.headers.get('location') as string);
    const secret = new URL(cb.headers.get('location') as string).searchParams.get('secret_id') as string;
    const issued = [...intercom.tokens].find((t) => !known.has(t)) as string;
    expect(issued).toBeDefined();
    // The app was uninstalled between the callback and the create: the token no longer works.
    intercom.tokens.delete(issued);
    const body = { customer_name: 'oauth-c', connector_type: 'intercom', name: 'via OAuth', server_side_oauth_secret_id: secret };
    const before = await h.snapshot();
    const refused = await call('POST', CONNECTORS, body);
    expect(refused.status, refused.text).toBe(424);
    expect(refused.text).not.toContain(issued);
    expect(await h.snapshot()).toBe(before);
    // The secret was not consumed: once the token works again, the same secret creates the connector.
    intercom.tokens.add(issued);
    const created = await call('POST', CONNECTORS, body);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ auth_variant: 'oauth', status: 'active', last_checked_at: expect.any(String) });
  });

  it('an upstream that starts answering 401 makes the connector auth_failed and stops its sync until a check passes', async () => {
    const c = (
      await call('POST', CONNECTORS, { customer_name: 'rev', connector_type: 'intercom', name: 'i', credentials: { access_token: intercom.accessToken } })
    ).body;
    const sync = h.service.ctx.sync;
    await sync.register(c.id);
    await sync.runOnce(c.id);
    expect((await call('GET', `${CONNECTORS}/${c.id}`)).body.status).toBe('active');

    // The token is revoked: the next sync fails with 401, the connector becomes auth_failed and its schedule is paused.
    intercom.tokens.delete(intercom.accessToken);
    try {
      await expect(sync.runOnce(c.id)).rejects.toMatchObject({ code: 'upstream_credentials_rejected' });
      const got = await call('GET', `${CONNECTORS}/${c.id}`);
      expect(got.body).toMatchObject({
        status: 'auth_failed',
        last_error: { code: 'upstream_credentials_rejected', message: expect.any(String), at: expect.any(String) },
      });
      conforms('GET', ONE, got);
      expect((await sync.status(c.id))?.next_run_at).toBeNull();

      // Even when its schedule says it is due (e.g. set by a run that ended meanwhile), the scheduler skips it.
      // (Other connectors of this file are taken off the schedule, so only this one is due.)
      const db = h.service.database.db as unknown as import('kysely').Kysely<{ sync_state: { connector_id: string; next_run_at: string | null } }>;
      await db.updateTable('sync_state').set({ next_run_at: null }).where('connector_id', '!=', c.id).execute();
      await db
        .updateTable('sync_state')
        .set({ next_run_at: new Date(0).toISOString() })
        .where('connector_id', '=', c.id)
        .execute();
      intercom.reset();
      sync.start();
      try {
        await until(async () => (await sync.status(c.id))?.next_run_at === null);
      } finally {
        await sync.stop();
      }
      expect(intercom.requests).toEqual([]);
      expect((await call('GET', `${CONNECTORS}/${c.id}`)).body.status).toBe('auth_failed');

      // Execute answers 424 and keeps it auth_failed.
      const ex = await call('POST', `${CONNECTORS}/${c.id}/execute`, { entity: 'admins', action: 'list' });
      expect(ex.status).toBe(424);
    } finally {
      intercom.tokens.add(intercom.accessToken);
    }
    // The token works again: a passing check makes it active and schedules its sync again.
    const checked = await call('POST', `${CONNECTORS}/${c.id}/check`);
    expect(checked.body).toMatchObject({ ok: true, connector: { status: 'active', last_error: null } });
    expect((await sync.status(c.id))?.next_run_at).not.toBeNull();
  });

  it('execute answering 401 sets auth_failed; PATCHed working credentials make it active again', async () => {
    const c = (
      await call('POST', CONNECTORS, { customer_name: 'ex', connector_type: 'intercom', name: 'i', credentials: { access_token: intercom.accessToken } })
    ).body;
    intercom.inject({
      path: '/admins',
      status: 401,
      json: { type: 'error.list', request_id: 'r1', errors: [{ code: 'unauthorized', message: 'Access Token Invalid' }] },
    });
    const ex = await call('POST', `${CONNECTORS}/${c.id}/execute`, { entity: 'admins', action: 'list' });
    expect(ex.status).toBe(424);
    expect((await call('GET', `${CONNECTORS}/${c.id}`)).body).toMatchObject({
      status: 'auth_failed',
      last_error: { code: 'upstream_credentials_rejected', message: 'intercom: Access Token Invalid' },
    });
    const patched = await call('PATCH', `${CONNECTORS}/${c.id}`, { credentials: { access_token: intercom.accessToken } });
    expect(patched.body).toMatchObject({ status: 'active', last_error: null });
  });
});
