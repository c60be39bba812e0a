/**
 * Revocable tokens (issue 46, item 5): an application lists its live tokens by id (never their
 * values), revokes one by id or all at once; a revoked token gets 401 on REST and MCP, a revoked
 * widget token's Connect session is refused; scoped tokens cannot list or revoke; revocations
 * are in the audit log. Both databases. lookupCacheMs 0: revocation is immediate (the bound
 * otherwise is SWITCHBOARD_LOOKUP_CACHE_MS).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from '../../src/index.ts';
import type { CreatedApplication } from '../../src/service/index.ts';
import { describeEachDialect, openApiErrors, startHarness, type Harness } from './helpers.ts';

const TOKENS = '/api/v1/account/tokens';
const MCP_LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

describeEachDialect('token revocation on %s', (dialect) => {
  let h: Harness;
  let app: CreatedApplication;

  beforeAll(async () => {
    h = await startHarness(dialect, { config: { lookupCacheMs: 0 } });
    app = await h.createApp(`revoke-${dialect}`);
  });
  afterAll(async () => {
    await h?.close();
  });

  const rest = (token: string) => h.request('GET', '/api/v1/integrations/connectors', { token });
  const mcp = (token: string) => h.request('POST', '/mcp', { token, body: MCP_LIST, headers: { accept: 'application/json, text/event-stream' } });
  const scopedFor = async (token: string) =>
    (await h.request('POST', '/api/v1/account/applications/scoped-token', { token, body: { customer_name: 'cust-1' } })).body.access_token as string;
  const widgetFor = async (token: string) =>
    (
      await h.request('POST', '/api/v1/account/applications/widget-token', {
        token,
        body: { customer_name: 'cust-1', allowed_origin: 'https://app.example.com' },
      })
    ).body.token as string;

  it('lists the live tokens by id, never their values; revokes one by id: 401 for it on REST and MCP, the others unaffected', async () => {
    const a = await h.token(app);
    const b = await h.token(app);
    const scoped = await scopedFor(a);
    const widget = await widgetFor(a);
    const listed = await h.request('GET', TOKENS, { token: a });
    expect(listed.status, listed.text).toBe(200);
    expect(openApiErrors('GET', TOKENS, listed)).toEqual([]);
    expect(listed.body.data.map((t: { kind: string }) => t.kind).sort()).toEqual(['application', 'application', 'connect_session', 'scoped']);
    for (const secret of [a, b, scoped, widget]) expect(listed.text).not.toContain(secret);

    expect((await rest(b)).status).toBe(200);
    expect((await mcp(b)).status).toBe(200);
    // A token's id is derived from its hash (the service never stores the token).
    const idOf = (t: string) => `tok_${createHash('sha256').update(t).digest('hex').slice(0, 32)}`;
    expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([idOf(a), idOf(b), idOf(scoped)]));
    const revoke = await h.request('DELETE', `${TOKENS}/${idOf(b)}`, { token: a });
    expect(revoke.status, revoke.text).toBe(204);
    const restB = await rest(b);
    expect([restB.status, restB.body.code]).toEqual([401, 'unauthorized']);
    expect((await mcp(b)).status).toBe(401);
    expect((await rest(a)).status).toBe(200);
    expect((await mcp(a)).status).toBe(200);
    // Again: gone. Unknown and malformed ids: 404 token_not_found.
    for (const id of [idOf(b), 'tok_00000000000000000000000000000000', 'nonsense']) {
      const r = await h.request('DELETE', `${TOKENS}/${id}`, { token: a });
      expect([r.status, r.body.code]).toEqual([404, 'token_not_found']);
    }
  });

  it("another application's token cannot be revoked; a scoped token can neither list nor revoke", async () => {
    const a = await h.token(app);
    const other = await h.createApp(`revoke-other-${dialect}`);
    const otherToken = await h.token(other);
    const otherIds = (await h.request('GET', TOKENS, { token: otherToken })).body.data.map((t: { id: string }) => t.id) as string[];
    for (const id of otherIds) expect((await h.request('DELETE', `${TOKENS}/${id}`, { token: a })).body.code).toBe('token_not_found');
    expect((await rest(otherToken)).status).toBe(200);
    const scoped = await scopedFor(a);
    for (const [method, path] of [
      ['GET', TOKENS],
      ['DELETE', TOKENS],
      ['DELETE', `${TOKENS}/${otherIds[0]}`],
    ] as const) {
      const r = await h.request(method, path, { token: scoped });
      expect([r.status, r.body.code]).toEqual([403, 'customer_forbidden']);
    }
    expect((await rest(a)).status).toBe(200);
  });

  it("revokes all of an application's tokens at once: application, scoped and widget tokens stop working everywhere; new ones can be had", async () => {
    const a = await h.token(app);
    const b = await h.token(app);
    const scoped = await scopedFor(a);
    const widget = await widgetFor(a);
    const other = await h.createApp(`revoke-all-other-${dialect}`);
    const otherToken = await h.token(other);
    const r = await h.request('DELETE', TOKENS, { token: a });
    expect(r.status, r.text).toBe(200);
    expect(r.body.revoked.access_tokens).toBeGreaterThanOrEqual(3);
    expect(r.body.revoked.connect_sessions).toBeGreaterThanOrEqual(1);
    for (const t of [a, b, scoped]) {
      expect((await rest(t)).status).toBe(401);
      expect((await mcp(t)).status).toBe(401);
    }
    const connect = await h.request('POST', '/connect/session', { body: { token: widget } });
    expect([connect.body.code, connect.body.details?.reason]).toEqual(['connect_session_invalid', 'expired']);
    // Another application is untouched.
    expect((await rest(otherToken)).status).toBe(200);
    // The client credentials still work: a new token, and the revocations are in the audit log.
    const fresh = await h.token(app);
    const audit = await h.request('GET', '/api/v1/audit-events?resource_type=token', { token: fresh });
    expect(audit.body.data.map((e: { action: string }) => e.action)).toContain('token.revoked');
    const all = await h.request('GET', '/api/v1/audit-events?action=tokens.revoked_all', { token: fresh });
    expect(all.body.data).toHaveLength(1);
    expect(all.body.data[0].details).toEqual(r.body.revoked);
  });

  it('the typed hosted client lists and revokes tokens', async () => {
    const client = createClient({ baseUrl: h.url, customerName: 'cust-1', clientId: app.client_id, clientSecret: app.client_secret });
    const own = await client.accessToken();
    const listed = await client.tokens.list();
    expect(listed.data.length).toBeGreaterThan(0);
    const extra = await h.token(app);
    const extraId = (await client.tokens.list()).data.find((t: { id: string }) => !listed.data.some((l: { id: string }) => l.id === t.id))!.id;
    await client.tokens.revoke(extraId);
    expect((await rest(extra)).status).toBe(401);
    expect((await rest(own)).status).toBe(200);
    const revoked = await client.tokens.revokeAll();
    expect(revoked.revoked.access_tokens).toBeGreaterThan(0);
    expect((await rest(own)).status).toBe(401);
    // The client gets a new token by itself.
    expect((await client.tokens.list()).data.length).toBe(1);
  });
});
