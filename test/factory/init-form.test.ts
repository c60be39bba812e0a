/**
 * `switchboard init --from-openapi` on a form-encoded API in Stripe's shapes (our own
 * test/fixtures/factory/form-api.yaml): form bodies become params with `body_encoding: form`,
 * POST on the item path is the update, deepObject query params become one param per key
 * (created_gte → created[gte]) or `expand[]`, starting_after + has_more pages by the last
 * record's id, an anyOf get response gives the first record alternative, a record's own `data`
 * is not taken for an envelope, and /v1/account is the check. Then the scaffold, unedited, runs
 * against the generic simulator on the same description.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { scaffoldFromOpenApi } from '../../src/factory/init-openapi.ts';
import { renderScaffold } from '../../src/factory/scaffold.ts';
import { loadManifestText, type LoadedManifest } from '../../src/manifest/index.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const FORM_API = 'test/fixtures/factory/form-api.yaml';
type Rec = Record<string, any>;

let m: Rec;
let loaded: LoadedManifest;
beforeAll(async () => {
  const s = await scaffoldFromOpenApi(FORM_API, { type: 'ledger', descriptionPath: 'openapi.yaml', source: 'test' });
  const yaml = renderScaffold(s);
  const dir = mkdtempSync(join(tmpdir(), 'sb-form-'));
  writeFileSync(join(dir, 'openapi.yaml'), readFileSync(FORM_API));
  loaded = loadManifestText(yaml, join(dir, 'connector.yaml'));
  m = parse(yaml) as Rec;
});

describe('init --from-openapi on a form-encoded description', () => {
  it('create and update (POST on the item path) send form bodies of typed params', () => {
    const { create, update } = m['entities'].members.actions;
    expect(create.request).toMatchObject({ method: 'POST', path: '/v1/members', body_encoding: 'form' });
    expect(create.request.body).toEqual({
      email: '{{params.email}}',
      age: '{{params.age}}',
      vip: '{{params.vip}}',
      metadata: '{{params.metadata}}',
      roles: '{{params.roles}}',
      seats: '{{params.seats}}',
      expand: '{{params.expand}}',
    });
    expect(create.params.email).toEqual({ type: 'string', maxLength: 100, required: true });
    // Stripe's "" (unset) alternative does not hide the object type.
    expect(create.params.metadata).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
    expect(update.request).toMatchObject({ method: 'POST', path: '/v1/members/{{params.member}}', body_encoding: 'form' });
  });

  it('deepObject query params: one param per key of an object, name[] for an array', () => {
    const list = m['entities'].members.actions.list;
    expect(Object.keys(list.params)).toEqual(['created_gt', 'created_gte', 'created_lt', 'created_lte', 'expand', 'limit', 'starting_after', 'status']);
    expect(list.request.query).toMatchObject({
      'created[gt]': '{{params.created_gt}}',
      'created[gte]': '{{params.created_gte}}',
      'expand[]': '{{params.expand}}',
    });
  });

  it("pages by the last record's id while has_more; records and the check", () => {
    const list = m['entities'].members.actions.list;
    expect(list.pagination).toEqual({ type: 'cursor', param: 'starting_after', next: "{{get (last body.data) 'id'}}", has_more: '{{body.has_more}}' });
    expect(list.response.meta).toEqual({ next_page: "{{when body.has_more (get (last body.data) 'id')}}" });
    // The get answers member | deleted_member: the record schema is the member's.
    expect(Object.keys(m['entities'].members.record.properties)).toContain('email');
    // A notice has its own id beside its data: the body is the record.
    expect(m['entities'].notices.actions.get.response).toEqual({ record: '{{body}}' });
    expect(m['check']).toEqual({ request: { method: 'GET', path: '/v1/account' } });
  });
});

describe('the unedited scaffold against the generic simulator on the same description', () => {
  let sim: OpenApiSimulator;
  let rt: ConnectorRuntime;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: FORM_API, seed: 4, sidecar: { records: 7 } });
    rt = new ConnectorRuntime(loaded, { token: 't' }, { baseUrl: sim.url, limiter: null });
  });
  afterAll(() => sim.close());

  it('creates with nested form keys, updates, and pages through every member', async () => {
    const created = (await rt.execute('members', 'create', { email: 'a@example.com', metadata: { plan: 'pro' }, roles: ['admin'], age: 40 })) as { data: Rec };
    expect(sim.requests.at(-1)!.rawBody).toBe('email=a%40example.com&age=40&metadata%5Bplan%5D=pro&roles%5B%5D=admin');
    expect(created.data).toMatchObject({ email: 'a@example.com', age: 40, metadata: { plan: 'pro' }, roles: ['admin'] });
    const updated = (await rt.execute('members', 'update', { member: created.data.id, email: 'b@example.com' })) as { data: Rec };
    expect(updated.data).toMatchObject({ id: created.data.id, email: 'b@example.com', metadata: { plan: 'pro' } });
    const seen: unknown[] = [];
    for await (const r of rt.records('members', { limit: 3 })) seen.push((r as Rec).id);
    expect(seen).toEqual([...sim.resources.get('members')!.records.keys()]);
    expect(sim.requests.filter((r) => r.path === '/v1/members' && r.method === 'GET')).toHaveLength(3);
  });
});
