/**
 * Connector lifecycle events out: connector.created on create; when the upstream revokes the
 * token, the sync fails (sync.failed) and the connector becomes auth_failed
 * (connector.auth_failed); a passing check afterwards schedules it again
 * (connector.reconnected). Each arrives once, signed, only at endpoints subscribed to it.
 * SQLite always, PostgreSQL when configured.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { describeEachDialect, startHosted, type Harness } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

describeEachDialect('connector lifecycle events on %s', (dialect) => {
  let intercom: IntercomSimulator;
  let h: Harness;
  let server: Server;
  let url: string;
  let token: string;
  const received: { type: string; data: Record<string, unknown>; ok: boolean }[] = [];
  let secret: string;

  beforeAll(async () => {
    intercom = await startIntercomSimulator({ size: 10, rateLimit: false });
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const { t, v1 } = Object.fromEntries(
          String(req.headers['switchboard-signature'])
            .split(',')
            .map((p) => p.split('=') as [string, string]),
        );
        const body = JSON.parse(raw) as { type: string; data: Record<string, unknown> };
        received.push({ type: body.type, data: body.data, ok: v1 === createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex') });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    ({ h, token } = await startHosted(dialect, {
      org: 'org-life',
      upstreams: { intercom: intercom.url },
      config: { eventsDelivery: false, webhookAllowPrivateAddresses: true },
    }));
    const ep = await h.request('POST', '/api/v1/webhook-endpoints', {
      token,
      body: { url, events: ['connector.created', 'connector.auth_failed', 'connector.reconnected', 'sync.failed'] },
    });
    expect(ep.status, ep.text).toBe(201);
    secret = ep.body.secret;
  });
  afterAll(async () => {
    await h?.close();
    await intercom?.close();
    await new Promise((r) => server?.close(r));
  });

  it('created, then auth_failed and sync.failed on a revoked token, then reconnected after a passing check', async () => {
    const c = (
      await h.request('POST', CONNECTORS, {
        token,
        body: { customer_name: 'life', connector_type: 'intercom', name: 'i', credentials: { access_token: intercom.accessToken } },
      })
    ).body;
    await h.service.ctx.outbox.deliverDue();
    expect(received.map((r) => r.type)).toEqual(['connector.created']);
    expect(received[0]!.data).toMatchObject({ connector: { id: c.id, connector_type: 'intercom', customer_name: 'life', status: 'active' } });

    intercom.tokens.delete(intercom.accessToken);
    await expect(h.service.ctx.sync.runOnce(c.id)).rejects.toMatchObject({ code: 'upstream_credentials_rejected' });
    await h.service.ctx.outbox.deliverDue();
    expect(received.map((r) => r.type).sort()).toEqual(['connector.auth_failed', 'connector.created', 'sync.failed']);
    expect(received.find((r) => r.type === 'connector.auth_failed')!.data).toMatchObject({
      connector: { id: c.id, status: 'auth_failed' },
      last_error: { code: 'upstream_credentials_rejected' },
    });
    expect(received.find((r) => r.type === 'sync.failed')!.data).toMatchObject({ connector_id: c.id, error: { code: 'upstream_credentials_rejected' } });
    expect(JSON.stringify(received)).not.toContain(intercom.accessToken);

    intercom.tokens.add(intercom.accessToken);
    const check = await h.request('POST', `${CONNECTORS}/${c.id}/check`, { token });
    expect(check.body.ok, check.text).toBe(true);
    await h.service.ctx.outbox.deliverDue();
    expect(received.map((r) => r.type).sort()).toEqual(['connector.auth_failed', 'connector.created', 'connector.reconnected', 'sync.failed']);
    expect(received.every((r) => r.ok)).toBe(true);
    // A second passing check changes nothing: no second reconnected.
    await h.request('POST', `${CONNECTORS}/${c.id}/check`, { token });
    await h.service.ctx.outbox.deliverDue();
    expect(received).toHaveLength(4);
  });
});
