/**
 * Airbyte's agent SDK (hosted mode) against the service: its sequence of calls replayed step by
 * step over HTTP exactly as it sends them (test/helpers/airbyte-sdk.ts), with the Granola
 * simulator upstream. SQLite always, PostgreSQL when configured.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { AirbyteSdkClient, SdkError, type SentRequest } from '../helpers/airbyte-sdk.ts';
import { describeEachDialect, startHosted, type Harness } from './helpers.ts';

const GRANOLA_DEFINITION_ID = '9023923c-002f-4131-9554-3ebdf56540a4';
const WORKSPACE = 'acme corp';

async function sdkError(p: Promise<unknown>): Promise<SdkError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SdkError) return e;
    throw e;
  }
  throw new Error('expected the SDK call to fail');
}

describeEachDialect("Airbyte's agent SDK replayed against the service on %s", (dialect) => {
  let sim: GranolaSimulator;
  let h: Harness;
  let sdk: AirbyteSdkClient;
  let organizationId: string;
  const sent: SentRequest[] = [];
  let connectorId = '';

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 12, rateLimit: false });
    const hosted = await startHosted(dialect, { org: 'org-airbyte', upstreams: { granola: sim.url }, config: { syncScheduler: true } });
    h = hosted.h;
    const app = hosted.app;
    organizationId = app.organization_id;
    sdk = new AirbyteSdkClient({
      baseUrl: `${h.url}/`,
      clientId: app.client_id,
      clientSecret: app.client_secret,
      organizationId,
      onRequest: (r) => sent.push(r),
    });
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  it('1. token: POST .../applications/token with the SDK header; reads access_token', async () => {
    const token = await sdk.getBearerToken();
    expect(token).toMatch(/^sbt_/);
    const r = sent.at(-1)!;
    expect(r.method).toBe('POST');
    expect(r.url).toBe(`${h.url}/api/v1/account/applications/token`);
    expect(r.headers).toMatchObject({ 'X-ADP-Agent-SDK': 'airbyte-agent-sdk', 'X-Organization-Id': organizationId, 'Content-Type': 'application/json' });
    // Cached: a second call sends nothing.
    const before = sent.length;
    expect(await sdk.getBearerToken()).toBe(token);
    expect(sent.length).toBe(before);
  });

  it('2. create with workspace_name + definition_id (older SDK versions)', async () => {
    const created = await sdk.createConnector({
      workspace_name: WORKSPACE,
      definition_id: GRANOLA_DEFINITION_ID,
      name: 'Granola of Acme',
      credentials: { api_key: sim.apiKey },
      replication_config: { streams: ['notes'] },
    });
    expect(created).toMatchObject({ customer_name: WORKSPACE, connector_type: 'granola', name: 'Granola of Acme', status: 'active' });
    connectorId = created['id'] as string;
  });

  it('3. lookup: GET connectors?workspace_name&definition_id answers exactly one connector', async () => {
    expect(await sdk.getConnectorId(WORKSPACE, GRANOLA_DEFINITION_ID)).toBe(connectorId);
    expect(sent.at(-1)!.url).toBe(`${h.url}/api/v1/integrations/connectors?workspace_name=acme%20corp&definition_id=${GRANOLA_DEFINITION_ID}`);
    // Another workspace, or another kind, has none: the SDK's ConnectorNotFoundError.
    expect((await sdkError(sdk.getConnectorId('someone else', GRANOLA_DEFINITION_ID))).kind).toBe('connector_not_found');
    expect((await sdkError(sdk.getConnectorId(WORKSPACE, 'd8313939-3782-41b0-be29-b3ca20d8dd3a'))).kind).toBe('connector_not_found');
  });

  it('4. execute list: result = the records, connector_metadata = the list meta; the cursor reaches the next page', async () => {
    const first = await sdk.execute(connectorId, 'notes', 'list', { page_size: 5 });
    expect(first.raw).toMatchObject({ status: 'success', execution_metadata: { connector_instance_id: connectorId } });
    expect(typeof (first.raw['execution_metadata'] as { execution_time_ms: unknown }).execution_time_ms).toBe('number');
    const records = first.data as { id: string }[];
    expect(records.map((r) => r.id)).toEqual(sim.ids().slice(0, 5));
    const meta = first.meta as { cursor: string | null; has_more: boolean };
    expect(meta.has_more).toBe(true);
    const second = await sdk.execute(connectorId, 'notes', 'list', { page_size: 5, cursor: meta.cursor });
    expect((second.data as { id: string }[]).map((r) => r.id)).toEqual(sim.ids().slice(5, 10));
    expect(JSON.parse(sent.at(-1)!.body!)).toEqual({ entity: 'notes', action: 'list', params: { page_size: 5, cursor: meta.cursor } });
  });

  it('5. execute with params: null', async () => {
    const r = await sdk.execute(connectorId, 'notes', 'list', null);
    expect(sent.at(-1)!.body).toBe('{"entity":"notes","action":"list","params":null}');
    expect((r.data as unknown[]).length).toBeGreaterThan(0);
  });

  it('6. get: result = the record', async () => {
    const id = sim.ids()[3]!;
    const r = await sdk.execute(connectorId, 'notes', 'get', { note_id: id });
    expect((r.data as { id: string; title: string }).id).toBe(id);
    expect((r.data as { title: string }).title).toBe(sim.note(id)!.title);
  });

  it('7. sync, then context_store_search and search: result = {data, meta: {has_more, cursor, took_ms}}', async () => {
    const token = await sdk.getBearerToken();
    // Creating the connector started its first sync; asking for one now may meet it running.
    const started = await h.request('POST', `/api/v1/integrations/connectors/${connectorId}/sync`, { token, body: {} });
    expect([202, 409], started.text).toContain(started.status);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const s = await h.request('GET', `/api/v1/integrations/connectors/${connectorId}/sync`, { token });
      if (s.body.status !== 'running' && s.body.last_finished_at !== null) {
        expect(s.body.status, s.text).toBe('idle');
        break;
      }
      if (Date.now() > deadline) throw new Error('sync did not finish');
      await new Promise((res) => setTimeout(res, 50));
    }
    const target = sim.note(sim.ids()[7]!)!;
    for (const action of ['context_store_search', 'search']) {
      // The SDK's generated connectors send fields as key lists.
      const r = await sdk.execute(connectorId, 'notes', action, { query: { filter: { eq: { id: target.id } } }, fields: [['id'], ['title']] });
      expect(r.data, action).toMatchObject({ data: [{ id: target.id, title: target.title }], meta: { has_more: false, cursor: null } });
      expect(typeof (r.data as { meta: { took_ms: unknown } }).meta.took_ms).toBe('number');
      expect(r.meta).toBeNull();
    }
  });

  it("8. a bad token is the SDK's authentication error, with our message", async () => {
    const e = await sdkError(
      sdk.send('POST', `/api/v1/integrations/connectors/${connectorId}/execute`, {
        token: 'sbt_not-a-token',
        json: { entity: 'notes', action: 'list', params: null },
      }),
    );
    expect(e.kind).toBe('authentication');
    expect(e.status).toBe(401);
    expect(e.message).toContain(': The access token is not valid');
  });

  it("9. an unknown entity is the SDK's validation error naming the valid entities", async () => {
    const e = await sdkError(sdk.execute(connectorId, 'meetings', 'list', null));
    expect(e.kind).toBe('validation');
    expect(e.message).toMatch(/: Unknown entity "meetings" for granola\. Valid entities: notes$/);
    // A schema violation: the SDK shows where and what.
    const bad = await sdkError(sdk.execute(connectorId, 'notes', 'get', {}));
    expect(bad.kind).toBe('validation');
    expect(bad.message).toContain('/params/note_id is required');
  });

  it("10. list a workspace's connectors", async () => {
    const data = await sdk.listWorkspaceConnectors(WORKSPACE);
    expect(data.map((c) => c['id'])).toEqual([connectorId]);
    expect(await sdk.listWorkspaceConnectors('nobody')).toEqual([]);
  });

  it('11. workspaces: GET /api/v1/workspaces?name_contains= → {id, name}', async () => {
    const id = await sdk.resolveWorkspaceId(WORKSPACE);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await sdk.resolveWorkspaceId(WORKSPACE)).toBe(id);
    expect((await sdkError(sdk.resolveWorkspaceId('acme'))).kind).toBe('value');
  });

  it('12. delete, then the lookup finds nothing', async () => {
    await sdk.deleteConnector(connectorId);
    expect((await sdkError(sdk.getConnectorId(WORKSPACE, GRANOLA_DEFINITION_ID))).kind).toBe('connector_not_found');
    const again = await sdkError(sdk.execute(connectorId, 'notes', 'list', null));
    expect(again.kind).toBe('http');
    expect(again.status).toBe(404);
  });

  it('every request carried the SDK header and the organization', () => {
    expect(sent.length).toBeGreaterThan(15);
    for (const r of sent) expect(r.headers).toMatchObject({ 'X-ADP-Agent-SDK': 'airbyte-agent-sdk', 'X-Organization-Id': organizationId });
  });
});
