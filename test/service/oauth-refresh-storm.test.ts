/**
 * OAuth refresh that never storms (issue 46, item 4): two service instances on one database
 * (SQLite file or PostgreSQL) serving one OAuth connector of the `acme` fixture type.
 *
 * - 100 parallel executes split over both instances on an expired token: exactly one refresh at
 *   the token endpoint, every execute answered 200 with the new token.
 * - a token endpoint that refuses (invalid_grant): one attempt, then auth_failed, one
 *   connector.auth_failed event, and oauth_refresh_failed on every execute with no upstream call.
 * - a token endpoint that keeps failing (503): exponential backoff and at most 6 attempts an hour.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedApplication } from '../../src/service/index.ts';
import { describeEachDialect, fakeUpstream, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const CLIENT_ID = 'acme-client';
const CLIENT_SECRET = 'acme-client-secret-0123456789';

type TokenMode = 'ok' | 'refuse' | 'unavailable';

/** The acme provider: a token endpoint that counts refreshes and an API behind bearer tokens. */
interface Provider {
  url: string;
  mode: TokenMode;
  refreshes: number;
  apiCalls: number;
  /** API requests answered 401 (a token the provider no longer accepts). */
  rejected: number;
  valid: Set<string>;
  /** Token answers are held until this many API calls were refused (0: answer at once). */
  holdUntilRejected: number;
  close(): Promise<void>;
}

async function startProvider(): Promise<Provider> {
  let n = 0;
  const held: (() => void)[] = [];
  const p = { mode: 'ok' as TokenMode, refreshes: 0, apiCalls: 0, rejected: 0, valid: new Set<string>(), holdUntilRejected: 0 } as Provider;
  const release = () => {
    if (p.rejected >= p.holdUntilRejected) for (const f of held.splice(0)) f();
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = await fakeUpstream((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.url === '/oauth/token') {
        p.refreshes++;
        const answer = () => {
          if (p.mode === 'refuse') return send(res, 400, { error: 'invalid_grant', error_description: 'The refresh token was revoked' });
          if (p.mode === 'unavailable') return send(res, 503, { error: 'temporarily_unavailable' });
          n++;
          p.valid.add(`at_new_${n}`);
          send(res, 200, { access_token: `at_new_${n}`, refresh_token: `rt_new_${n}`, expires_in: 3600, token_type: 'Bearer' });
        };
        held.push(answer);
        release();
        return;
      }
      p.apiCalls++;
      const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      if (token === undefined || !p.valid.has(token)) {
        p.rejected++;
        send(res, 401, { message: 'token expired' });
        release();
        return;
      }
      send(res, 200, { items: [{ id: 'w1', name: 'Sprocket' }] });
    });
  });
  p.url = server.url;
  p.close = server.close;
  return p;
}

describeEachDialect('OAuth refresh across two instances on %s', (dialect) => {
  let provider: Provider;
  let a: Harness;
  let b: Harness;
  let token: string;
  let app: CreatedApplication;

  beforeAll(async () => {
    provider = await startProvider();
    const config = {
      connectorTypes: { acme: { baseUrl: provider.url, oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenUrl: `${provider.url}/oauth/token` } } },
      rateLimitPerMinute: 100_000,
      upstreamMaxWaitMs: 60_000,
    };
    a = await startHarness(dialect, { config });
    b = await startHarness(dialect, { config, database: a.db });
    app = await a.createApp(`refresh-${dialect}`);
    token = await a.token(app);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await provider?.close();
  });
  afterEach(() => {
    a.clock.offsetMs = 0;
    b.clock.offsetMs = 0;
  });

  /** An acme OAuth connector (stored without a check) whose access token expired an hour ago, or is still valid. */
  async function connector(o: { expired: boolean; accessToken?: string }): Promise<string> {
    const credentials = {
      access_token: o.accessToken ?? 'at_old',
      refresh_token: 'rt_old_secret',
      expires_at: Math.floor(Date.now() / 1000) + (o.expired ? -3600 : 3600),
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    };
    const r = await a.request('POST', `${CONNECTORS}?check=false`, { token, body: { customer_name: 'c', connector_type: 'acme', name: 'acme', credentials } });
    expect(r.status, r.text).toBe(201);
    return r.body.id as string;
  }

  const execute = (h: Harness, id: string) => h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'widgets', action: 'list' } });
  const parallel = (id: string, n: number) => Promise.all(Array.from({ length: n }, (_, i) => execute(i % 2 === 0 ? a : b, id)));

  it('100 parallel executes over both instances on an expired token: exactly one refresh', async () => {
    provider.mode = 'ok';
    provider.refreshes = 0;
    const id = await connector({ expired: true });
    const replies = await parallel(id, 100);
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
    expect(provider.refreshes).toBe(1);
    // Later calls use the stored token on both instances: still one refresh.
    const more = await parallel(id, 10);
    expect(more.map((r) => r.status)).toEqual(more.map(() => 200));
    expect(provider.refreshes).toBe(1);
  });

  it('100 parallel executes whose token the upstream stopped accepting (401): one refresh, though both instances ran the connector before', async () => {
    provider.mode = 'ok';
    provider.valid.add('at_warm');
    const id = await connector({ expired: false, accessToken: 'at_warm' });
    // Both instances build their runtime with the same credentials.
    expect((await execute(a, id)).status).toBe(200);
    expect((await execute(b, id)).status).toBe(200);
    provider.valid.delete('at_warm');
    provider.refreshes = 0;
    provider.rejected = 0;
    // The token endpoint answers only once all 100 calls met the 401: every instance wants a refresh at the same time.
    provider.holdUntilRejected = 100;
    try {
      const replies = await parallel(id, 100);
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
      expect(provider.refreshes).toBe(1);
    } finally {
      provider.holdUntilRejected = 0;
    }
  });

  it('a refused refresh: one attempt, auth_failed, one connector.auth_failed event, then a clear error on every execute without any upstream call', async () => {
    provider.mode = 'refuse';
    provider.refreshes = 0;
    const id = await connector({ expired: true });
    const apiBefore = provider.apiCalls;
    const replies = await parallel(id, 20);
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 424));
    for (const r of replies) expect(r.body.code).toBe('oauth_refresh_failed');
    expect(replies[0]!.body.detail).toMatch(/refused to refresh .*invalid_grant.*auth_failed/);
    expect(provider.refreshes).toBe(1);
    const row = await a.request('GET', `${CONNECTORS}/${id}`, { token });
    expect(row.body.status).toBe('auth_failed');
    const events = await a.service.database.db
      .selectFrom('event_outbox' as never)
      .selectAll()
      .execute();
    const failed = (events as { type: string; payload: string }[]).filter((e) => e.type === 'connector.auth_failed' && e.payload.includes(id));
    expect(failed).toHaveLength(1);
    // Every later execute, on either instance, is refused at once: no token request, no API call.
    const later = await parallel(id, 20);
    expect(later.map((r) => [r.status, r.body.code])).toEqual(later.map(() => [424, 'oauth_refresh_failed']));
    expect(provider.refreshes).toBe(1);
    expect(provider.apiCalls).toBe(apiBefore);
    // Nothing of the refresh token reached a log line.
    expect([...a.logs, ...b.logs].join('\n')).not.toContain('rt_old_secret');
  });

  it('new credentials end the refusal: the next refresh is tried', async () => {
    provider.mode = 'refuse';
    provider.refreshes = 0;
    const id = await connector({ expired: true });
    expect((await execute(a, id)).status).toBe(424);
    expect(provider.refreshes).toBe(1);
    provider.mode = 'ok';
    const credentials = {
      access_token: 'at_again',
      refresh_token: 'rt_again',
      expires_at: Math.floor(Date.now() / 1000) - 10,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    };
    const patched = await a.request('PATCH', `${CONNECTORS}/${id}?check=false`, { token, body: { credentials } });
    expect(patched.status, patched.text).toBe(200);
    const r = await execute(a, id);
    expect(r.status, r.text).toBe(200);
    expect(provider.refreshes).toBe(2);
  });

  it('a failing token endpoint (503): exponential backoff and at most 6 attempts an hour, whatever the traffic', async () => {
    provider.mode = 'unavailable';
    provider.refreshes = 0;
    const id = await connector({ expired: true });
    const first = await execute(a, id);
    expect(first.status).toBe(503);
    expect(first.body.code).toBe('oauth_refresh_deferred');
    expect(Number(first.headers.get('retry-after'))).toBe(30);
    expect(provider.refreshes).toBe(1);
    // Within the backoff: no attempt, on either instance, however many calls.
    const burst = await parallel(id, 30);
    expect(burst.map((r) => r.body.code)).toEqual(burst.map(() => 'oauth_refresh_deferred'));
    expect(provider.refreshes).toBe(1);
    // Every 5 minutes a few calls for 55 minutes: backoff 30 s, 1, 2, 4, 8, 15 min (the cap), then the hourly limit.
    const attempts: number[] = [];
    for (let minute = 5; minute <= 55; minute += 5) {
      a.clock.offsetMs = b.clock.offsetMs = minute * 60_000;
      await parallel(id, 4);
      attempts.push(provider.refreshes);
    }
    // minute:     5  10 15 20 25 30 35 40 45 50 55
    expect(attempts).toEqual([2, 3, 4, 5, 5, 6, 6, 6, 6, 6, 6]);
    const capped = await execute(b, id);
    expect(capped.body.detail).toMatch(/at most 6/);
    // A new hour: one more attempt.
    a.clock.offsetMs = b.clock.offsetMs = 61 * 60_000;
    // (the service's own access token is an hour old too)
    token = await a.token(app);
    await parallel(id, 4);
    expect(provider.refreshes).toBe(7);
    // A transient failure never makes the connector auth_failed.
    expect((await a.request('GET', `${CONNECTORS}/${id}`, { token })).body.status).toBe('active');
  });
});

describe('refusal classification', () => {
  it('invalid_grant and 4xx refusals are permanent; 5xx, 429 and unreachable are transient', async () => {
    const { isRefusedRefresh } = await import('../../src/service/connectors/refresh-coordinator.ts');
    const { SwitchboardError } = await import('../../src/errors/index.ts');
    const e = (details: Record<string, unknown>) => new SwitchboardError('oauth_refresh_failed', 'x', { details });
    expect(isRefusedRefresh(e({ upstream_status: 400, oauth_error: 'invalid_grant' }))).toBe(true);
    expect(isRefusedRefresh(e({ upstream_status: 200, oauth_error: 'invalid_grant' }))).toBe(true);
    expect(isRefusedRefresh(e({ upstream_status: 401 }))).toBe(true);
    expect(isRefusedRefresh(e({ upstream_status: 503, oauth_error: 'temporarily_unavailable' }))).toBe(false);
    expect(isRefusedRefresh(e({ upstream_status: 429 }))).toBe(false);
    expect(isRefusedRefresh(e({}))).toBe(false);
  });
});
