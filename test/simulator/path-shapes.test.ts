/**
 * The generic simulator on vendor shapes beyond `/things` and `/things/{id}` (issue 40, classes
 * 1–3), on descriptions of our own: records looked up and created by the id the item path names
 * (`{Sid}` → `sid`, `{InvoiceID}` → `InvoiceID`), `.json` suffixes, `#fragment` pseudo-paths served
 * per operation with real records, a nested collection with no item path served under its parent,
 * same-name collections under different parents kept apart, and one record as the one item of an
 * array under a plural key in answers and bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, any>;
const SHAPES = new URL('../fixtures/factory/path-shapes.yaml', import.meta.url).pathname;
const PASCAL = new URL('../fixtures/factory/pascal-envelopes.yaml', import.meta.url).pathname;

async function send(
  sim: OpenApiSimulator,
  method: string,
  path: string,
  body?: { json?: unknown; form?: string },
  auth = 'Basic dTpw',
): Promise<{ status: number; body: Rec }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: {
      authorization: auth,
      ...(body?.json !== undefined
        ? { 'content-type': 'application/json' }
        : body?.form !== undefined
          ? { 'content-type': 'application/x-www-form-urlencoded' }
          : {}),
    },
    ...(body?.json !== undefined ? { body: JSON.stringify(body.json) } : body?.form !== undefined ? { body: body.form } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Rec) };
}

describe('the simulator on path shapes', () => {
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: SHAPES, seed: 3 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('keys records by the id the item path names, under .json paths, and creates with that id', async () => {
    expect(sim.resources.get('Messages')?.idField).toBe('sid');
    expect(sim.resources.get('Accounts')?.idField).toBe('sid');
    const account = [...sim.resources.get('Accounts')!.records.keys()][0]!;
    // Seeded messages sit under the seeded accounts (the parent item path's param is named Sid, the nested one AccountSid).
    const listed = await send(sim, 'GET', `/Accounts/${account}/Messages.json`);
    expect(listed.status).toBe(200);
    expect(listed.body['messages'].length).toBeGreaterThan(0);
    const made = await send(sim, 'POST', `/Accounts/${account}/Messages.json`, { form: 'To=%2B15550001&Body=Hello' });
    expect(made.status).toBe(201);
    expect(made.body).not.toHaveProperty('id');
    expect(made.body['sid']).toMatch(/^SM[0-9a-f]{32}$/);
    const sid = String(made.body['sid']);
    expect((await send(sim, 'GET', `/Accounts/${account}/Messages/${sid}.json`)).body).toMatchObject({ sid, body: 'Hello', to: '+15550001' });
    expect((await send(sim, 'POST', `/Accounts/${account}/Messages/${sid}.json`, { form: 'Body=Changed' })).body).toMatchObject({ sid, body: 'Changed' });
    expect((await send(sim, 'GET', `/Accounts/${account}/Messages/SMnope.json`)).status).toBe(404);
    expect((await send(sim, 'GET', '/Accounts/ACnope/Messages.json')).status).toBe(404);
  });

  it('serves #fragment operations with the records, and 404 for an unknown id', async () => {
    const file = [...sim.resources.get('files')!.records.keys()][0]!;
    const linked = await send(sim, 'PUT', `/files/${file}`, { json: { shared_link: { access: 'open' } } });
    expect(linked.status).toBe(200);
    expect(linked.body).toMatchObject({ id: file, shared_link: { access: 'open' } });
    expect((await send(sim, 'GET', `/files/${file}?fields=shared_link`)).body).toMatchObject({ id: file, shared_link: { access: 'open' } });
    expect((await send(sim, 'PUT', '/files/does-not-exist', { json: { shared_link: { access: 'open' } } })).status).toBe(404);
    expect((await send(sim, 'GET', '/files/does-not-exist')).status).toBe(404);
  });

  it('lists a nested collection without an item path from its records, under its parent', async () => {
    const folders = [...sim.resources.get('folders')!.records.keys()];
    const items = sim.resources.get('items')!;
    expect(items.records.size).toBeGreaterThan(0);
    const first = await send(sim, 'GET', `/folders/${folders[0]!}/items`);
    expect(first.status).toBe(200);
    const ids = (first.body['entries'] as Rec[]).map((e) => e['id']);
    expect(ids.length).toBeGreaterThan(0);
    expect(ids.every((id) => items.records.get(String(id))?.parents['folder_id'] === folders[0])).toBe(true);
    expect((await send(sim, 'GET', '/folders/nope/items')).status).toBe(404);
  });

  it('keeps same-name collections under different parents apart, each with its own fields', async () => {
    expect(sim.resources.has('lists_members')).toBe(true);
    expect(sim.resources.has('segments_members')).toBe(true);
    const segment = [...sim.resources.get('segments')!.records.keys()][0]!;
    const members = (await send(sim, 'GET', `/segments/${segment}/members`)).body['members'] as Rec[];
    expect(members.length).toBeGreaterThan(0);
    expect(members[0]).toHaveProperty('segment_score');
    const list = [...sim.resources.get('lists')!.records.keys()][0]!;
    const made = await send(sim, 'POST', `/lists/${list}/members`, { json: { email_address: 'a@example.com', status: 'subscribed' } });
    expect((await send(sim, 'GET', `/lists/${list}/members/${String(made.body['id'])}`)).body).toMatchObject({ email_address: 'a@example.com' });
    expect(sim.resources.get('segments_members')!.records.has(String(made.body['id']))).toBe(false);
  });
});

describe('the simulator on one-record arrays under a plural key', () => {
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: PASCAL, seed: 5 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('creates, gets and updates through {"Invoices": [{...}]}, with UUID ids named InvoiceID', async () => {
    expect(sim.resources.get('Invoices')?.idField).toBe('InvoiceID');
    const bearer = 'Bearer t';
    const made = await send(sim, 'POST', '/Invoices', { json: { Invoices: [{ Reference: 'R-1', Total: 12.5 }] } }, bearer);
    expect(made.status).toBe(200);
    expect(made.body['Invoices']).toHaveLength(1);
    const id = String(made.body['Invoices'][0].InvoiceID);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await send(sim, 'GET', `/Invoices/${id}`, undefined, bearer)).body).toEqual({
      Invoices: [expect.objectContaining({ InvoiceID: id, Reference: 'R-1', Total: 12.5 })],
    });
    const updated = await send(sim, 'POST', `/Invoices/${id}`, { json: { Invoices: [{ Reference: 'R-2' }] } }, bearer);
    expect(updated.body['Invoices'][0]).toMatchObject({ InvoiceID: id, Reference: 'R-2', Total: 12.5 });
    expect((await send(sim, 'GET', '/Invoices/00000000-0000-4000-8000-000000000000', undefined, bearer)).status).toBe(404);
  });

  it('answers a list in the array whose items are the records, not the sort order', async () => {
    expect(sim.resources.get('Reports')?.idField).toBe('ReportID');
    const listed = await send(sim, 'GET', '/Reports', undefined, 'Bearer t');
    expect((listed.body['Rows'] as Rec[]).length).toBe(sim.resources.get('Reports')!.records.size);
    const id = String(listed.body['Rows'][0].ReportID);
    expect((await send(sim, 'GET', `/Reports/${id}`, undefined, 'Bearer t')).body['Reports'][0]).toMatchObject({ ReportID: id });
  });
});
