/**
 * Per-subscription webhook secrets (signature.secret: subscription), hosted, on both databases,
 * with a fake vendor that makes a webhook per create and signs its deliveries with that webhook's
 * own secret, which it either sends in a handshake to the target URL while it answers the create
 * (from: handshake, echoed back), answers in the create's record (from: response), or takes from
 * the create's params (from: generated):
 * - the secret is stored sealed (never in the answer, the logs or the audit log), and a delivery
 *   signed with it is applied; a forged one is 401 webhook_signature_invalid and changes nothing;
 * - another connector's URL does not verify with this connector's secret;
 * - a handshake while no subscription is being made is 409 webhook_handshake_unexpected;
 *   parallel handshakes each take a pending subscription of their own, or none;
 * - a failed create leaves no subscription behind; a caller may not give a generated secret.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadManifestText, type LoadedManifest } from '../../src/manifest/index.ts';
import { describeEachDialect, fakeUpstream, startHosted, type Harness, type Reply } from '../service/helpers.ts';

type From = 'handshake' | 'response' | 'generated';
const RULES: Record<From, string> = {
  handshake: '{ from: handshake, header: X-Demo-Hook-Secret }',
  response: '{ from: response, field: secret }',
  generated: '{ from: generated, param: secret }',
};

const manifestFor = (from: From): LoadedManifest =>
  loadManifestText(
    `
manifest_version: 1
type: hooks_${from}
title: Hooks ${from}
kind: other
base_url: { default: https://api.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  items:
    primary_key: id
    record: { type: object, properties: { id: { type: string }, name: { type: string } } }
    actions:
      list:
        request: { method: GET, path: /items }
        response: { records: "{{body.data}}" }
    sync: {}
  hooks:
    primary_key: id
    record: { type: object, properties: { id: { type: string }, target: { type: string } } }
    actions:
      create:
        params:
          target: { type: string }
          resource: { type: string, required: true }
          ${from === 'generated' ? 'secret: { type: string }' : ''}
        request:
          method: POST
          path: /hooks/${from}
          body: { target: "{{params.target}}", resource: "{{params.resource}}"${from === 'generated' ? ', secret: "{{params.secret}}"' : ''} }
        response: { record: "{{body.data}}" }
webhooks:
  signature: { scheme: hmac, header: X-Demo-Signature, prefix: "sha256=", secret: subscription }
  subscription_secret: ${RULES[from]}
  events: "{{body.events}}"
  attribution: { by: url }
  subscribe: { entity: hooks, action: create, url_param: target }
  topic: "{{event.type}}"
  topics:
    - { match: item.deleted, entity: items, id: "{{event.item.id}}", delete: true }
    - { match: item.*, entity: items, id: "{{event.item.id}}", record: "{{event.item}}" }
`,
    `hooks_${from}.yaml`,
  );

const sign = (secret: string, raw: string): string => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

/** The fake vendor: the secrets of the webhooks it made, by target URL; `failNext` fails a create after its handshake. */
interface Vendor {
  url: string;
  secrets: Map<string, string[]>;
  /** Every target URL it was given. */
  targets: string[];
  failNext: boolean;
  handshakeAnswers: { status: number; echoed: string | null }[];
  close(): Promise<void>;
}

async function startVendor(): Promise<Vendor> {
  const secrets = new Map<string, string[]>();
  const v = { secrets, targets: [] as string[], failNext: false, handshakeAnswers: [] as Vendor['handshakeAnswers'] };
  const read = async (req: IncomingMessage): Promise<Record<string, string>> => {
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
    return JSON.parse(raw) as Record<string, string>;
  };
  const up = await fakeUpstream((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const body = await read(req);
      const from = (req.url ?? '').split('/').pop() as From;
      v.targets.push(body['target']!);
      // By the connector's URL (the service adds ?subscription=<id> to it).
      const target = body['target']!.split('?')[0]!;
      const keep = (secret: string): void => void secrets.set(target, [...(secrets.get(target) ?? []), secret]);
      let secret = randomBytes(16).toString('hex');
      if (from === 'handshake') {
        // As the vendor does: it POSTs the handshake to the target and makes the webhook only when the secret is echoed.
        const r = await fetch(body['target']!, { method: 'POST', headers: { 'x-demo-hook-secret': secret } });
        v.handshakeAnswers.push({ status: r.status, echoed: r.headers.get('x-demo-hook-secret') });
        if (r.status !== 204 || r.headers.get('x-demo-hook-secret') !== secret) {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"errors":[{"message":"handshake failed"}]}');
          return;
        }
      } else if (from === 'generated') secret = body['secret']!;
      if (v.failNext) {
        v.failNext = false;
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"errors":[{"message":"no such resource"}]}');
        return;
      }
      keep(secret);
      const data = { id: `hook-${randomBytes(4).toString('hex')}`, target: body['target'], ...(from === 'response' ? { secret } : {}) };
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
    })();
  });
  return Object.assign(v, { url: up.url, close: up.close });
}

describeEachDialect('per-subscription webhook secrets on %s', (dialect) => {
  let h: Harness;
  let token: string;
  let vendor: Vendor;
  const ids: Record<string, string> = {};
  let other: string;

  const hookPath = (from: From, id: string): string => `/api/v1/webhooks/hooks_${from}/${id}`;
  const deliver = (from: From, id: string, events: unknown[], secret: string | undefined, subscription?: string): Promise<Reply> => {
    const raw = JSON.stringify({ events });
    return h.request('POST', `${hookPath(from, id)}${subscription !== undefined ? `?subscription=${subscription}` : ''}`, {
      raw,
      headers: secret === undefined ? {} : { 'x-demo-signature': sign(secret, raw) },
    });
  };
  const subscribe = (from: From, id: string, params: Record<string, unknown> = {}): Promise<Reply> =>
    h.request('POST', `/api/v1/integrations/connectors/${id}/execute`, {
      token,
      body: { entity: 'hooks', action: 'create', params: { resource: 'project-1', ...params } },
    });
  const items = async (id: string): Promise<unknown[]> => {
    const r = await h.request('GET', `/api/v1/integrations/connectors/${id}/records?entity=items`, { token });
    expect(r.status, r.text).toBe(200);
    return r.body.data as unknown[];
  };
  const rows = () =>
    h.service.database.db
      .selectFrom('webhook_subscriptions' as never)
      .selectAll()
      .execute() as Promise<Record<string, unknown>[]>;

  beforeAll(async () => {
    vendor = await startVendor();
    const manifests = (['handshake', 'response', 'generated'] as From[]).map(manifestFor);
    const started = await startHosted(dialect, {
      registry: new Map(manifests.map((m) => [m.type, m])),
      upstreams: Object.fromEntries(manifests.map((m) => [m.type, vendor.url])),
    });
    ({ h, token } = started);
    const add = async (customer: string, type: string): Promise<string> => {
      const r = await h.request('POST', '/api/v1/integrations/connectors', {
        token,
        body: { customer_name: customer, connector_type: type, name: type, credentials: { token: 't' } },
      });
      expect(r.status, r.text).toBe(201);
      return r.body.id as string;
    };
    for (const m of manifests) ids[m.type] = await add('c1', m.type);
    other = await add('c2', 'hooks_handshake');
  });
  afterAll(async () => {
    await h?.close();
    await vendor?.close();
  });

  it('handshake: the secret is kept while the webhook is made, echoed; a delivery signed with it is applied, a forged one changes nothing', async () => {
    const id = ids['hooks_handshake']!;
    const r = await subscribe('handshake', id);
    expect(r.status, r.text).toBe(200);
    expect(vendor.handshakeAnswers.at(-1)).toMatchObject({ status: 204 });
    const secret = vendor.secrets.get(`${h.url}${hookPath('handshake', id)}`)![0]!;
    expect(r.text).not.toContain(secret);
    const stored = (await rows()).filter((x) => x['connector_id'] === id);
    expect(stored).toMatchObject([{ state: 'active', connector_type: 'hooks_handshake' }]);
    expect(JSON.stringify(stored)).not.toContain(secret);

    // The URL the vendor was given names the subscription; a delivery naming another one does not verify.
    const row = stored[0]!['id'] as string;
    expect(vendor.targets.at(-1)).toBe(`${h.url}${hookPath('handshake', id)}?subscription=${row}`);
    const named = JSON.stringify({ events: [{ type: 'item.created', item: { id: 'i0' } }] });
    const wrongRow = await h.request('POST', `${hookPath('handshake', id)}?subscription=${randomUUID()}`, {
      raw: named,
      headers: { 'x-demo-signature': sign(secret, named) },
    });
    expect(wrongRow.status, wrongRow.text).toBe(401);
    const ok = await deliver('handshake', id, [{ type: 'item.created', item: { id: 'i1', name: 'one' } }], secret, row);
    expect(ok.status, ok.text).toBe(202);
    expect(await items(id)).toMatchObject([{ id: 'i1', name: 'one' }]);

    const before = JSON.stringify(await rows());
    for (const forged of [undefined, 'not-the-secret']) {
      const bad = await deliver('handshake', id, [{ type: 'item.deleted', item: { id: 'i1' } }], forged);
      expect(bad.status, bad.text).toBe(401);
      expect(bad.body.code).toBe('webhook_signature_invalid');
    }
    // Signed with this connector's secret, sent to another connector's URL: refused there.
    const elsewhere = await deliver('handshake', other, [{ type: 'item.created', item: { id: 'i2' } }], secret);
    expect(elsewhere.status, elsewhere.text).toBe(401);
    expect(await items(id)).toMatchObject([{ id: 'i1' }]);
    expect(await items(other)).toEqual([]);
    expect(JSON.stringify(await rows())).toBe(before);
    expect(h.logs.join('\n')).not.toContain(secret);
  });

  it('a handshake while no subscription is being made is 409 and stores nothing; parallel handshakes each take a pending subscription or none', async () => {
    const before = (await rows()).length;
    const lone = await h.request('POST', hookPath('handshake', other), { headers: { 'x-demo-hook-secret': 'planted-secret' } });
    expect(lone.status, lone.text).toBe(409);
    expect(lone.body.code).toBe('webhook_handshake_unexpected');
    expect(lone.headers.get('x-demo-hook-secret')).toBeNull();
    expect((await rows()).length).toBe(before);
    // A connector of another type, or none: 404 before anything.
    expect((await h.request('POST', hookPath('handshake', ids['hooks_response']!), { headers: { 'x-demo-hook-secret': 's' } })).status).toBe(404);

    // Three subscriptions being made at once, six handshakes racing for them.
    const subs = h.service.ctx.webhookSubscriptions;
    const manifest = h.service.ctx.registry.get('hooks_handshake')!;
    const pending = await Promise.all(
      [1, 2, 3].map(() => subs.begin({ id: other, connector_type: 'hooks_handshake' }, manifest.webhooks!.subscriptionSecret!)),
    );
    const sent = [1, 2, 3, 4, 5, 6].map((n) => `parallel-secret-${n}-${randomBytes(8).toString('hex')}`);
    const answers = await Promise.all(sent.map((s) => h.request('POST', hookPath('handshake', other), { headers: { 'x-demo-hook-secret': s } })));
    expect(answers.map((a) => a.status).sort()).toEqual([204, 204, 204, 409, 409, 409]);
    const accepted = sent.filter((_s, i) => answers[i]!.status === 204);
    for (const [i, a] of answers.entries()) if (a.status === 204) expect(a.headers.get('x-demo-hook-secret')).toBe(sent[i]);
    expect((await subs.secrets(other)).sort()).toEqual([...accepted].sort());
    expect(await subs.count(other)).toEqual({ active: 3, pending: 0 });
    expect(pending).toHaveLength(3);
    // Each kept secret verifies a delivery to this connector; a refused one does not.
    const good = await deliver('handshake', other, [{ type: 'item.created', item: { id: 'p1' } }], accepted[1]);
    expect(good.status, good.text).toBe(202);
    const refused = sent.find((s) => !accepted.includes(s));
    expect((await deliver('handshake', other, [{ type: 'item.created', item: { id: 'p2' } }], refused)).status).toBe(401);

    // Parallel creates through the service: each handshake lands in its own subscription.
    const id = ids['hooks_handshake']!;
    const made = await Promise.all([1, 2, 3].map(() => subscribe('handshake', id)));
    expect(made.map((m) => m.status)).toEqual([200, 200, 200]);
    expect(await subs.count(id)).toEqual({ active: 4, pending: 0 });
    expect((await subs.secrets(id)).sort()).toEqual([...vendor.secrets.get(`${h.url}${hookPath('handshake', id)}`)!].sort());
  });

  it('response: the secret in the create answer is kept and not handed back; deliveries verify with it', async () => {
    const id = ids['hooks_response']!;
    const r = await subscribe('response', id);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).not.toHaveProperty('secret');
    const secret = vendor.secrets.get(`${h.url}${hookPath('response', id)}`)![0]!;
    expect(r.text).not.toContain(secret);
    const ok = await deliver('response', id, [{ type: 'item.updated', item: { id: 'r1', name: 'x' } }], secret);
    expect(ok.status, ok.text).toBe(202);
    expect(await items(id)).toMatchObject([{ id: 'r1' }]);
    expect((await deliver('response', id, [{ type: 'item.deleted', item: { id: 'r1' } }], 'guess')).status).toBe(401);
    expect(await items(id)).toHaveLength(1);
    const audit = await h.service.database.db
      .selectFrom('audit_events' as never)
      .selectAll()
      .execute();
    expect(JSON.stringify(audit)).not.toContain(secret);
    expect(h.logs.join('\n')).not.toContain(secret);
  });

  it("a sealed secret copied into another connector's subscription opens nowhere else", async () => {
    const id = ids['hooks_response']!;
    const secret = vendor.secrets.get(`${h.url}${hookPath('response', id)}`)![0]!;
    const [row] = (await rows()).filter((x) => x['connector_id'] === id && x['state'] === 'active');
    const db = h.service.database.db as unknown as { insertInto(t: string): { values(v: unknown): { execute(): Promise<unknown> } } };
    await db
      .insertInto('webhook_subscriptions')
      .values({ ...row, id: randomUUID(), connector_id: other })
      .execute();
    expect(await h.service.ctx.webhookSubscriptions.secrets(other)).not.toContain(secret);
    expect(await h.service.ctx.webhookSubscriptions.secrets(id)).toEqual([secret]);
  });

  it('generated: the service makes the secret and sends it; a caller may not give it; a failed create keeps nothing', async () => {
    const id = ids['hooks_generated']!;
    const given = await subscribe('generated', id, { secret: 'mine' });
    expect(given.status, given.text).toBe(400);
    expect(given.body.code).toBe('invalid_params');
    const r = await subscribe('generated', id);
    expect(r.status, r.text).toBe(200);
    const secret = vendor.secrets.get(`${h.url}${hookPath('generated', id)}`)![0]!;
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    expect(r.text).not.toContain(secret);
    expect((await deliver('generated', id, [{ type: 'item.created', item: { id: 'g1' } }], secret)).status).toBe(202);

    const before = await h.service.ctx.webhookSubscriptions.count(id);
    vendor.failNext = true;
    const failed = await subscribe('generated', id);
    expect(failed.status, failed.text).toBeGreaterThanOrEqual(400);
    expect(await h.service.ctx.webhookSubscriptions.count(id)).toEqual(before);

    // Deleting the connector deletes its subscriptions' secrets.
    const del = await h.request('DELETE', `/api/v1/integrations/connectors/${id}`, { token });
    expect(del.status, del.text).toBe(204);
    expect((await rows()).filter((x) => x['connector_id'] === id)).toEqual([]);
  });
});
