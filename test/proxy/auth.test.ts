/**
 * The proxy and the connector's health on both databases (the `acme` OAuth fixture type): an
 * OAuth connector whose token the vendor stopped accepting is refreshed first and the call
 * answered; a 401 the vendor still gives is handed back as sent and marks the connector
 * auth_failed, as an execute's would; a refused refresh marks it too, and later proxy calls are
 * refused without an upstream call until the credentials change.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect, fakeUpstream, startHarness, type Harness } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const CLIENT_ID = 'acme-client';
const CLIENT_SECRET = 'acme-client-secret-0123456789';

interface Provider {
  url: string;
  refuseRefresh: boolean;
  refreshes: number;
  apiCalls: number;
  valid: Set<string>;
  close(): Promise<void>;
}

async function startProvider(): Promise<Provider> {
  let n = 0;
  const p = { refuseRefresh: false, refreshes: 0, apiCalls: 0, valid: new Set<string>() } as Provider;
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = await fakeUpstream((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/oauth/token') {
        p.refreshes++;
        if (p.refuseRefresh) return send(res, 400, { error: 'invalid_grant', error_description: 'The refresh token was revoked' });
        n++;
        p.valid.add(`at_new_${n}`);
        return send(res, 200, { access_token: `at_new_${n}`, refresh_token: `rt_new_${n}`, expires_in: 3600, token_type: 'Bearer' });
      }
      p.apiCalls++;
      const token = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      if (token === undefined || !p.valid.has(token)) return send(res, 401, { message: 'token not accepted' });
      send(res, 200, { items: [{ id: 'w1', name: 'Sprocket' }], path: req.url });
    });
  });
  p.url = server.url;
  p.close = server.close;
  return p;
}

describeEachDialect("the proxy and the connector's auth on %s", (dialect) => {
  let provider: Provider;
  let h: Harness;
  let token: string;

  beforeAll(async () => {
    provider = await startProvider();
    h = await startHarness(dialect, {
      config: {
        upstreamThrottle: false,
        connectorTypes: {
          acme: { baseUrl: provider.url, oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, tokenUrl: `${provider.url}/oauth/token` } },
        },
      },
    });
    token = await h.token(await h.createApp(`proxy-auth-${dialect}`));
  });
  afterAll(async () => {
    await h?.close();
    await provider?.close();
  });
  beforeEach(() => {
    provider.refuseRefresh = false;
    provider.refreshes = 0;
    provider.apiCalls = 0;
  });

  async function connector(credentials: Record<string, unknown>): Promise<string> {
    const r = await h.request('POST', `${CONNECTORS}?check=false`, { token, body: { customer_name: 'c', connector_type: 'acme', name: 'acme', credentials } });
    expect(r.status, r.text).toBe(201);
    return r.body.id as string;
  }
  const oauth = (accessToken: string) =>
    connector({
      access_token: accessToken,
      refresh_token: 'rt_old_secret',
      expires_at: Math.floor(Date.now() / 1000) + 3600,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
  const proxyGet = (id: string) => h.request('GET', `${CONNECTORS}/${id}/proxy/widgets/extra?x=1`, { token });
  const status = async (id: string) => (await h.request('GET', `${CONNECTORS}/${id}`, { token })).body.status as string;

  it('an OAuth connector whose token the vendor refuses (401) is refreshed first, and the call answered', async () => {
    const id = await oauth('at_revoked_early');
    const r = await proxyGet(id);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('switchboard-proxy-source')).toBe('upstream');
    expect(r.body.path).toBe('/widgets/extra?x=1');
    expect(provider.refreshes).toBe(1);
    expect(provider.apiCalls).toBe(2);
    expect(await status(id)).toBe('active');
  });

  it('a 401 the vendor still gives comes back as sent and marks the connector auth_failed, as an execute would', async () => {
    const id = await connector({ api_key: 'key_not_accepted' });
    expect(await status(id)).toBe('active');
    const r = await proxyGet(id);
    expect(r.status).toBe(401);
    expect(r.headers.get('switchboard-proxy-source')).toBe('upstream');
    expect(r.text).toBe('{"message":"token not accepted"}');
    expect(provider.apiCalls).toBe(1);
    const row = (await h.request('GET', `${CONNECTORS}/${id}`, { token })).body;
    expect(row.status).toBe('auth_failed');
    expect(row.last_error.code).toBe('upstream_credentials_rejected');
    // The same as an execute's 401 on another connector with the same credentials.
    const other = await connector({ api_key: 'key_not_accepted' });
    expect((await h.request('POST', `${CONNECTORS}/${other}/execute`, { token, body: { entity: 'widgets', action: 'list' } })).status).toBe(424);
    expect(await status(other)).toBe('auth_failed');
  });

  it('a refused refresh marks the connector auth_failed; later proxy calls are refused without an upstream call', async () => {
    provider.refuseRefresh = true;
    const id = await oauth('at_revoked_too');
    const r = await proxyGet(id);
    expect(r.headers.get('switchboard-proxy-source')).toBe('switchboard');
    expect(r.body.code).toBe('oauth_refresh_failed');
    expect(provider.refreshes).toBe(1);
    expect(await status(id)).toBe('auth_failed');
    const calls = provider.apiCalls;
    const again = await proxyGet(id);
    expect(again.body.code).toBe('oauth_refresh_failed');
    expect(provider.apiCalls).toBe(calls);
    expect(provider.refreshes).toBe(1);
  });
});
