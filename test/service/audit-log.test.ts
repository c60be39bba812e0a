/**
 * The audit log (issue 46, item 3): every audited control-plane action, run through the real
 * service on both databases, shows in GET /api/v1/audit-events with who, what, which resource,
 * when, from where and the request id; filters and cursor paging; other organizations see none
 * of it; and no secret of any of those actions is anywhere in the audit table (nor, on SQLite,
 * in the database files in plain text).
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from '../../src/index.ts';
import type { CreatedApplication } from '../../src/service/index.ts';
import { startAcmeProvider, type AcmeProvider } from './fixtures/acme-provider.ts';
import { describeEachDialect, openApiErrors, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const AUDIT = '/api/v1/audit-events';
const REDIRECT = 'https://app.example.com/done';

describeEachDialect('audit log on %s', (dialect) => {
  let provider: AcmeProvider;
  let h: Harness;
  let app: CreatedApplication;
  let token: string;
  /** Every secret value the actions below handle. */
  const secrets: string[] = [];

  beforeAll(async () => {
    provider = await startAcmeProvider();
    h = await startHarness(dialect, {
      config: {
        // A sync started by hand needs a running scheduler (else 503 sync_scheduler_not_running).
        syncScheduler: true,
        connectorTypes: {
          acme: {
            baseUrl: provider.url,
            oauth: {
              clientId: provider.clientId,
              clientSecret: provider.clientSecret,
              authorizeUrl: `${provider.url}/oauth/authorize`,
              tokenUrl: `${provider.url}/oauth/token`,
            },
          },
        },
      },
    });
    app = await h.createApp(`audit-${dialect}`);
    token = await h.token(app);
    secrets.push(app.client_secret, token, provider.clientSecret);
  });
  afterAll(async () => {
    await h?.close();
    await provider?.close();
  });

  const list = async (query = '', t = token) => {
    const r = await h.request('GET', `${AUDIT}${query}`, { token: t });
    expect(r.status, r.text).toBe(200);
    expect(openApiErrors('GET', AUDIT, r)).toEqual([]);
    return r.body as { data: Record<string, unknown>[]; meta: { cursor: string | null; has_more: boolean } };
  };

  it('records every listed action, with no secret anywhere in the audit table', async () => {
    // Tokens: an application token, a scoped token, a widget token (Connect session).
    const second = await h.token(app);
    const scoped = await h.request('POST', '/api/v1/account/applications/scoped-token', { token, body: { customer_name: 'cust-1' } });
    expect(scoped.status, scoped.text).toBe(200);
    const widget = await h.request('POST', '/api/v1/account/applications/widget-token', {
      token,
      body: { customer_name: 'cust-1', allowed_origin: 'https://app.example.com' },
    });
    expect(widget.status, widget.text).toBe(200);
    secrets.push(second, scoped.body.access_token, widget.body.token);
    // Connectors: created, renamed, re-authorized (new credentials), sync started by hand, deleted.
    const created = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'cust-1', connector_type: 'acme', name: 'acme key', credentials: { api_key: 'acme-key-first-0123456789' } },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect((await h.request('PATCH', `${CONNECTORS}/${id}`, { token, body: { name: 'renamed' } })).status).toBe(200);
    const reauth = await h.request('PATCH', `${CONNECTORS}/${id}?check=false`, { token, body: { credentials: { api_key: 'acme-key-second-9876543210' } } });
    expect(reauth.status, reauth.text).toBe(200);
    secrets.push('acme-key-first-0123456789', 'acme-key-second-9876543210');
    const sync = await h.request('POST', `${CONNECTORS}/${id}/sync`, { token, body: { full: true } });
    expect(sync.status, sync.text).toBe(202);
    // Webhook endpoints: created (its signing secret is in the answer) and deleted.
    const endpoint = await h.request('POST', '/api/v1/webhook-endpoints', {
      token,
      body: { url: 'https://hooks.example.com/in', events: ['connector.created'] },
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    for (const v of Object.values(endpoint.body as Record<string, unknown>)) if (typeof v === 'string' && /secret|whsec/i.test(v)) secrets.push(v);
    if (typeof endpoint.body.secret === 'string') secrets.push(endpoint.body.secret);
    expect((await h.request('DELETE', `/api/v1/webhook-endpoints/${endpoint.body.id}`, { token })).status).toBe(204);
    // OAuth: one flow completed (the provider's tokens and the secret_id are secrets), one refused by the user.
    const oauth = async (deny: boolean) => {
      const init = await h.request('POST', `${CONNECTORS}/oauth/initiate`, {
        token,
        body: { customer_name: 'cust-2', connector_type: 'acme', redirect_url: REDIRECT },
      });
      expect(init.status, init.text).toBe(200);
      provider.deny = deny;
      const consent = await h.request('GET', init.body.consent_url);
      const callback = new URL(consent.headers.get('location') as string);
      secrets.push(callback.searchParams.get('code') ?? 'no-code', callback.searchParams.get('state') ?? 'no-state');
      const cb = await h.request('GET', callback.toString());
      expect(cb.status).toBe(302);
      return new URL(cb.headers.get('location') as string);
    };
    const done = await oauth(false);
    const secretId = done.searchParams.get('secret_id') as string;
    expect(secretId).toMatch(/^sbo_/);
    secrets.push(secretId, ...provider.accessTokens);
    const viaOAuth = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'cust-2', connector_type: 'acme', name: 'via OAuth', server_side_oauth_secret_id: secretId },
    });
    expect(viaOAuth.status, viaOAuth.text).toBe(201);
    expect((await oauth(true)).searchParams.get('error')).toBe('access_denied');
    expect((await h.request('DELETE', `${CONNECTORS}/${id}`, { token })).status).toBe(204);

    const { data } = await list('?limit=200');
    const actions = data.map((e) => `${e['action']}:${e['outcome']}`).reverse();
    expect(actions).toEqual([
      'token.issued:success',
      'token.issued:success',
      'scoped_token.issued:success',
      'widget_token.issued:success',
      'connector.created:success',
      'connector.updated:success',
      'connector.reauthorized:success',
      'sync.started:success',
      'webhook_endpoint.created:success',
      'webhook_endpoint.deleted:success',
      'oauth.initiated:success',
      'oauth.completed:success',
      'connector.created:success',
      'oauth.initiated:success',
      'oauth.completed:refused',
      'connector.deleted:success',
    ]);
    const byAction = (a: string) => data.find((e) => e['action'] === a)!;
    expect(byAction('connector.deleted')).toMatchObject({
      organization_id: app.organization_id,
      resource_type: 'connector',
      resource_id: id,
      actor_token_kind: 'application',
      actor_application_id: expect.any(String),
      ip: '127.0.0.1',
      request_id: expect.any(String),
    });
    expect(byAction('connector.reauthorized')['details']).toMatchObject({ connector_type: 'acme', fields: ['credentials'] });
    expect(byAction('oauth.completed')).toMatchObject({
      outcome: 'refused',
      actor_token_kind: 'public',
      actor_customer: 'cust-2',
      details: { connector_type: 'acme', error: 'access_denied' },
    });
    expect(byAction('token.issued')).toMatchObject({ resource_type: 'application', actor_token_kind: 'public' });

    // The whole table, every column of every row (all organizations), holds none of the secrets.
    const rows = JSON.stringify(
      await h.service.database.db
        .selectFrom('audit_events' as never)
        .selectAll()
        .execute(),
    );
    expect(rows).toContain('connector.reauthorized');
    for (const s of secrets) expect(rows, `a secret (${s.slice(0, 6)}…) is in the audit table`).not.toContain(s);
    if (dialect === 'sqlite' && h.db.file !== undefined) {
      const files = [h.db.file, `${h.db.file}-wal`]
        .filter(existsSync)
        .map((f) => readFileSync(f).toString('latin1'))
        .join('');
      for (const s of [app.client_secret, 'acme-key-first-0123456789', 'acme-key-second-9876543210', secretId])
        expect(files.includes(s), 'a secret in plain text in the database file').toBe(false);
    }
  });

  it('filters, pages with a cursor and stays within the organization', async () => {
    const all = (await list('?limit=200')).data;
    expect(all.length).toBeGreaterThan(4);
    const created = await list('?action=connector.created');
    expect(created.data.map((e) => e['action'])).toEqual(created.data.map(() => 'connector.created'));
    expect(created.data.length).toBe(all.filter((e) => e['action'] === 'connector.created').length);
    const one = all.find((e) => e['resource_type'] === 'connector')!;
    const forResource = await list(`?resource_type=connector&resource_id=${one['resource_id'] as string}`);
    expect(forResource.data.every((e) => e['resource_id'] === one['resource_id'])).toBe(true);
    expect((await list(`?actor=${one['actor_application_id'] as string}&limit=200`)).data.length).toBeGreaterThan(0);
    expect((await list('?actor=nobody')).data).toEqual([]);
    // Time window: nothing in the future, everything since an hour ago.
    expect((await list(`?since=${encodeURIComponent(new Date(Date.now() + 3_600_000).toISOString())}`)).data).toEqual([]);
    expect((await list(`?since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}&limit=200`)).data.length).toBe(all.length);
    // Pages of 2, newest first, together the whole log.
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof list>> = await list(`?limit=2${cursor !== null ? `&cursor=${cursor}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(2);
      paged.push(...page.data.map((e) => e['id']));
      cursor = page.meta.cursor;
    } while (cursor !== null);
    expect(paged).toEqual(all.map((e) => e['id']));
    const bad = await h.request('GET', `${AUDIT}?cursor=nonsense`, { token });
    expect([bad.status, bad.body.code]).toEqual([400, 'invalid_cursor']);
    // Another organization's application sees only its own events (its token issue).
    const other = await h.createApp(`audit-other-${dialect}`);
    const otherToken = await h.token(other);
    expect((await list('', otherToken)).data.map((e) => e['action'])).toEqual(['token.issued']);
  });

  it('the typed hosted client lists the audit log with filters', async () => {
    const client = createClient({ baseUrl: h.url, customerName: 'cust-1', clientId: app.client_id, clientSecret: app.client_secret });
    const page = await client.audit.list({ action: 'connector.deleted', limit: 5 });
    expect(page.data.map((e) => [e.action, e.resource_type])).toEqual([['connector.deleted', 'connector']]);
    expect(page.meta.has_more).toBe(false);
  });

  it('keeps events for the retention period only', async () => {
    const { AuditLog } = await import('../../src/service/ops/audit-log.ts');
    let now = Date.now() + 400 * 86_400_000;
    const log = new AuditLog(
      h.service.database.db as never,
      () => now,
      365,
      (e) => {
        throw e;
      },
    );
    expect(await log.prune()).toBeGreaterThan(0);
    expect((await list()).data).toEqual([]);
    now = Date.now();
  });
});
