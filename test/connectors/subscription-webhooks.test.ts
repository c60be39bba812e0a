/**
 * Webhooks whose secret is the subscription's own, hosted with the simulators, on both databases:
 * Asana (the X-Hook-Secret handshake sent to the target while the create is answered, deliveries
 * of several events signed with X-Hook-Signature), Attio (the create answers `secret`;
 * Attio-Signature) and Airtable (the create answers `macSecretBase64`, a base64 key;
 * X-Airtable-Content-MAC: hmac-sha256=<hex>). A front in each simulator's place records what
 * the vendor answered (and, for Asana, sends the handshake as Asana does); the service keeps the
 * secret, never returns it, applies a delivery signed with it and refuses a forged one, which
 * changes nothing.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, fakeUpstream, startHosted, type Harness, type Reply } from '../service/helpers.ts';
import { startConnectorSimulator, type ConnectorSimulator } from '../helpers/simulators.ts';

const PUBLIC = 'https://switchboard.example';

/** In a simulator's place: forwards every request, keeps the answers of webhook creates, and (handshake) sends the handshake first. */
interface Front {
  url: string;
  created: Record<string, unknown>[];
  /** Secrets sent in handshakes, and whether each was echoed. */
  handshakes: { secret: string; status: number; echoed: boolean }[];
  close(): Promise<void>;
}

async function front(sim: ConnectorSimulator, o: { handshake?: { header: string; target: (body: any) => string; local: () => string } } = {}): Promise<Front> {
  const created: Record<string, unknown>[] = [];
  const handshakes: Front['handshakes'] = [];
  const up = await fakeUpstream((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      const isCreate = req.method === 'POST' && /\/webhooks$/.test(new URL(req.url ?? '/', 'http://x').pathname);
      if (isCreate && o.handshake !== undefined) {
        // As Asana does: the handshake goes to the target (here: the service's own address for its path) before the answer.
        const target = new URL(o.handshake.target(JSON.parse(raw.toString('utf8'))));
        const secret = randomBytes(32).toString('hex');
        const r = await fetch(`${o.handshake.local()}${target.pathname}${target.search}`, { method: 'POST', headers: { [o.handshake.header]: secret } });
        const echoed = r.headers.get(o.handshake.header) === secret;
        handshakes.push({ secret, status: r.status, echoed });
        if (!(r.status === 200 || r.status === 204) || !echoed) {
          res
            .writeHead(400, { 'content-type': 'application/json' })
            .end('{"errors":[{"message":"The remote server did not respond with the handshake secret."}]}');
          return;
        }
      }
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'content-length')) as Record<string, string>;
      const answer = await fetch(`${sim.baseUrl}${req.url}`, { method: req.method!, headers, ...(raw.length > 0 ? { body: raw } : {}) });
      const text = await answer.text();
      if (isCreate && answer.ok) created.push(JSON.parse(text) as Record<string, unknown>);
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
    })();
  });
  return { url: up.url, created, handshakes, close: up.close };
}

const hex = (key: string | Buffer, raw: string): string => createHmac('sha256', key).update(raw).digest('hex');

describeEachDialect('webhooks with a secret per subscription (Asana, Attio, Airtable) on %s', (dialect) => {
  let h: Harness;
  let token: string;
  const sims: Record<string, ConnectorSimulator> = {};
  const fronts: Record<string, Front> = {};
  const ids: Record<string, string> = {};

  const exec = (type: string, entity: string, action: string, params: Record<string, unknown>): Promise<Reply> =>
    h.request('POST', `/api/v1/integrations/connectors/${ids[type]}/execute`, { token, body: { entity, action, params } });
  const post = (type: string, raw: string, headers: Record<string, string>, id = ids[type]!): Promise<Reply> =>
    h.request('POST', `/api/v1/webhooks/${type}/${id}`, { raw, headers });
  const records = async (type: string, entity: string): Promise<Record<string, unknown>[]> => {
    const r = await h.request('GET', `/api/v1/integrations/connectors/${ids[type]}/records?entity=${entity}`, { token });
    expect(r.status, r.text).toBe(200);
    return r.body.data as Record<string, unknown>[];
  };

  beforeAll(async () => {
    for (const type of ['asana', 'attio', 'airtable']) sims[type] = await startConnectorSimulator(type);
    fronts['asana'] = await front(sims['asana']!, { handshake: { header: 'x-hook-secret', target: (b) => b.data.target, local: () => h.url } });
    fronts['attio'] = await front(sims['attio']!);
    fronts['airtable'] = await front(sims['airtable']!);
    ({ h, token } = await startHosted(dialect, {
      upstreams: Object.fromEntries(Object.entries(fronts).map(([t, f]) => [t, f.url])),
      config: { publicUrl: PUBLIC },
    }));
    for (const type of Object.keys(sims)) {
      const r = await h.request('POST', '/api/v1/integrations/connectors', {
        token,
        body: { customer_name: 'c1', connector_type: type, name: type, credentials: sims[type]!.credentials },
      });
      expect(r.status, r.text).toBe(201);
      ids[type] = r.body.id;
    }
    const other = await h.request('POST', '/api/v1/integrations/connectors', {
      token,
      body: { customer_name: 'c2', connector_type: 'asana', name: 'other', credentials: sims['asana']!.credentials },
    });
    ids['asana-other'] = other.body.id;
  });
  afterAll(async () => {
    await h?.close();
    for (const f of Object.values(fronts)) await f.close();
    for (const s of Object.values(sims)) await s.close();
  });

  it('Asana: the handshake secret is kept; an events delivery signed with it stores the task; forged, elsewhere or unexpected is refused', async () => {
    const workspace = (await exec('asana', 'workspaces', 'list', {})).body.data[0].gid;
    const project = (await exec('asana', 'projects', 'list', { workspace })).body.data[0].gid;
    const task = (await exec('asana', 'tasks', 'list', { project })).body.data[0].gid;
    const made = await exec('asana', 'webhooks', 'create', { resource: project });
    expect(made.status, made.text).toBe(200);
    expect(made.body.data.target).toMatch(new RegExp(`^${PUBLIC}/api/v1/webhooks/asana/${ids['asana']}\\?subscription=[0-9a-f-]{36}$`));
    const [hs] = fronts['asana']!.handshakes;
    expect(hs).toMatchObject({ status: 204, echoed: true });
    const secret = hs!.secret;
    expect(made.text).not.toContain(secret);

    const event = (action: string) => ({
      user: { gid: '1', resource_type: 'user' },
      created_at: new Date().toISOString(),
      action,
      resource: { gid: task, resource_type: 'task', resource_subtype: 'default_task' },
      parent: { gid: project, resource_type: 'project' },
    });
    const raw = JSON.stringify({ events: [event('changed'), { ...event('added'), resource: { gid: '42', resource_type: 'story' } }] });
    const forged = await post('asana', raw, { 'x-hook-signature': hex('guessed', raw) });
    expect(forged.status, forged.text).toBe(401);
    expect(forged.body.code).toBe('webhook_signature_invalid');
    expect(await records('asana', 'tasks')).toEqual([]);
    // This connector's secret at another Asana connector's URL: no subscription of its own, refused.
    expect((await post('asana', raw, { 'x-hook-signature': hex(secret, raw) }, ids['asana-other'])).status).toBe(401);

    const ok = await post('asana', raw, { 'x-hook-signature': hex(secret, raw) });
    expect(ok.status, ok.text).toBe(202);
    expect(ok.body.events).toMatchObject([{ entity: 'tasks', id: task }, { ignored: 'no topic rule' }]);
    expect((await records('asana', 'tasks')).map((t) => t['gid'])).toEqual([task]);
    // A heartbeat: no events, signed.
    expect((await post('asana', '{"events":[]}', { 'x-hook-signature': hex(secret, '{"events":[]}') })).status).toBe(202);
    const gone = JSON.stringify({ events: [event('deleted')] });
    const del = await post('asana', gone, { 'x-hook-signature': hex(secret, gone) });
    expect(del.status, del.text).toBe(202);
    expect(del.body.events, del.text).toMatchObject([{ entity: 'tasks', id: task, connectors: [{ deleted: 1 }] }]);
    expect((await records('asana', 'tasks')).map((t) => (t['_metadata'] as { action: string }).action)).toEqual(['deleted']);

    // A handshake while no webhook is being made: refused, nothing kept.
    const lone = await post('asana', '', { 'x-hook-secret': 'planted' });
    expect(lone.status, lone.text).toBe(409);
    expect(lone.body.code).toBe('webhook_handshake_unexpected');
    expect(await h.service.ctx.webhookSubscriptions.secrets(ids['asana']!)).toEqual([secret]);
  });

  it('Attio: the secret answered by the create is kept, not returned; deliveries signed with it apply their events', async () => {
    const made = await exec('attio', 'webhooks', 'create', { subscriptions: [{ event_type: 'note.created', filter: null }] });
    expect(made.status, made.text).toBe(200);
    expect(made.body.data).not.toHaveProperty('secret');
    const secret = (fronts['attio']!.created[0] as { data: { secret: string } }).data.secret;
    expect(typeof secret).toBe('string');
    expect(made.text).not.toContain(secret);
    const note = (await exec('attio', 'notes', 'list', { limit: 1 })).body.data[0];
    const raw = JSON.stringify({
      webhook_id: made.body.data.webhook_id,
      events: [{ event_type: 'note.created', id: note.id, parent_object_id: 'p', parent_record_id: 'r', actor: { type: 'workspace-member', id: 'm' } }],
    });
    const forged = await post('attio', raw, { 'attio-signature': hex('nope', raw) });
    expect(forged.status).toBe(401);
    expect(await records('attio', 'notes')).toEqual([]);
    const ok = await post('attio', raw, { 'attio-signature': hex(secret, raw) });
    expect(ok.status, ok.text).toBe(202);
    expect((await records('attio', 'notes')).map((n) => n['note_id'])).toEqual([note.note_id]);
  });

  it('Airtable: macSecretBase64 is kept; a ping MAC-signed with the decoded key is accepted, one keyed with its text is not', async () => {
    const base = (await exec('airtable', 'bases', 'list', {})).body.data[0].id;
    const made = await exec('airtable', 'webhooks', 'create', { base_id: base });
    expect(made.status, made.text).toBe(200);
    expect(made.body.data).not.toHaveProperty('macSecretBase64');
    const secret = (fronts['airtable']!.created[0] as { macSecretBase64: string }).macSecretBase64;
    expect(made.text).not.toContain(secret);
    const raw = JSON.stringify({ base: { id: base }, webhook: { id: made.body.data.id }, timestamp: new Date().toISOString() });
    const asText = await post('airtable', raw, { 'x-airtable-content-mac': `hmac-sha256=${hex(secret, raw)}` });
    expect(asText.status, asText.text).toBe(401);
    const ok = await post('airtable', raw, { 'x-airtable-content-mac': `hmac-sha256=${hex(Buffer.from(secret, 'base64'), raw)}` });
    expect(ok.status, ok.text).toBeLessThan(300);
    expect(ok.body).toMatchObject({ topic: 'notification', entity: 'records' });
  });
});
