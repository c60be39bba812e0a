/**
 * The audit log's actors that hold no API token (issue 46, item 3), on both databases:
 * connectors created and re-authorized through the Connect UI pages are recorded with the Connect
 * session as who (its application and customer), and applications created (and organizations
 * granted) by `switchboard admin` with the admin CLI as who; no secret in the table.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runSwitchboard } from '../helpers/process.ts';
import { describeEachDialect, fakeUpstream, startHosted, type Harness } from './helpers.ts';

const SESSIONS = '/api/v1/integrations/connect/sessions';
const AUDIT = '/api/v1/audit-events';
const GOOD_KEY = 'grn_audit_connect_key_7d1e';

describeEachDialect('audit log actors without a token on %s', (dialect) => {
  let h: Harness;
  let token: string;
  let up: Awaited<ReturnType<typeof fakeUpstream>>;

  beforeAll(async () => {
    up = await fakeUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.headers.authorization !== `Bearer ${GOOD_KEY}`)
          return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Unauthorized"}');
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"notes":[{"id":"not_1","title":"t"}],"hasMore":false,"cursor":null}');
      });
    });
    ({ h, token } = await startHosted(dialect, { org: `audit-actors-${dialect}`, upstreams: { granola: up.url } }));
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });

  /** Open a Connect session in a "browser" and submit the Granola key form; the session's link token is returned. */
  async function connectThroughUi(customer: string): Promise<string> {
    const created = await h.request('POST', SESSIONS, { token, body: { customer_name: customer, allowed_connector_types: ['granola'] } });
    expect(created.status, created.text).toBe(201);
    const x = await h.request('POST', '/connect/session', { body: { token: created.body.token } });
    expect(x.status).toBe(204);
    const cookie = /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1] as string;
    const form = await fetch(`${h.url}/connect/types/granola`, { headers: { cookie: `sb_connect=${cookie}` } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] as string;
    const res = await fetch(`${h.url}/connect/types/granola/credentials`, {
      method: 'POST',
      headers: { cookie: `sb_connect=${cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, variant: 'api_key', 'field.api_key': GOOD_KEY }).toString(),
    });
    await res.text();
    expect(res.status).toBe(200);
    return created.body.token as string;
  }

  const auditTable = async (): Promise<string> =>
    JSON.stringify(
      await h.service.database.db
        .selectFrom('audit_events' as never)
        .selectAll()
        .execute(),
    );

  it('a connector created through the Connect UI is recorded with the Connect session as who', async () => {
    const linkToken = await connectThroughUi('ui-customer');
    const connectors = await h.request('GET', '/api/v1/integrations/connectors?customer_name=ui-customer', { token });
    expect(connectors.body.data).toHaveLength(1);
    const connectorId = connectors.body.data[0].id as string;
    const events = await h.request('GET', `${AUDIT}?action=connector.created&resource_id=${connectorId}`, { token });
    expect(events.status, events.text).toBe(200);
    expect(events.body.data).toHaveLength(1);
    const e = events.body.data[0];
    expect(e).toMatchObject({
      action: 'connector.created',
      outcome: 'success',
      resource_type: 'connector',
      resource_id: connectorId,
      actor_token_kind: 'connect_session',
      actor_customer: 'ui-customer',
    });
    // The application that made the session: the same as the one that issued the API token.
    const issued = await h.request('GET', `${AUDIT}?action=connect_session.created&limit=1`, { token });
    expect(e.actor_application_id).toBe(issued.body.data[0].actor_application_id);
    expect(typeof e.actor_application_id).toBe('string');
    expect(e.details).toMatchObject({ connector_type: 'granola', customer_name: 'ui-customer', connect_session_id: expect.any(String) });
    const table = await auditTable();
    expect(table).not.toContain(GOOD_KEY);
    expect(table).not.toContain(linkToken);
  });

  it('an application created and an organization granted by the admin CLI are recorded with the admin CLI as who', async () => {
    const url =
      h.db.schema !== undefined ? `${h.db.url}${h.db.url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${h.db.schema}`)}` : h.db.url;
    const env = { SWITCHBOARD_DATABASE_URL: url };
    const made = await runSwitchboard(['admin', 'create-app', '--org', `cli-org-${dialect}`, '--name', 'made by admin'], env);
    expect(made.code, made.stderr).toBe(0);
    const created = JSON.parse(made.stdout) as { organization_id: string; client_id: string; client_secret: string };
    const granted = await runSwitchboard(['admin', 'grant', '--client-id', created.client_id, '--org', `cli-second-${dialect}`], env);
    expect(granted.code, granted.stderr).toBe(0);
    const appToken = await h.token(created);
    // The application now reaches two organizations: the one it was created in is named.
    const events = await h.request('GET', `${AUDIT}?action=application.created`, {
      token: appToken,
      headers: { 'x-organization-id': created.organization_id },
    });
    expect(events.status, events.text).toBe(200);
    const row = await h.store.findApplicationByClientId(created.client_id);
    expect(events.body.data).toHaveLength(1);
    expect(events.body.data[0]).toMatchObject({
      organization_id: created.organization_id,
      action: 'application.created',
      outcome: 'success',
      resource_type: 'application',
      resource_id: row?.id,
      actor_application_id: null,
      actor_token_kind: 'admin_cli',
      details: { client_id: created.client_id, name: 'made by admin', org: `cli-org-${dialect}` },
    });
    // The grant is recorded in the organization granted.
    const second = JSON.parse(granted.stdout) as { organization_id: string };
    const grants = await h.service.database.db
      .selectFrom('audit_events' as never)
      .selectAll()
      .where('action' as never, '=', 'application.granted' as never)
      .execute();
    expect(grants).toEqual([expect.objectContaining({ organization_id: second.organization_id, resource_id: row?.id, actor_token_kind: 'admin_cli' })]);
    expect(await auditTable()).not.toContain(created.client_secret);
  });
});
