/**
 * The generic simulator on Bitbucket Cloud's shapes (our own test/fixtures/factory/workspace-repos.yaml):
 * GET /repositories/{workspace}, which only lists, is the collection of the item
 * /repositories/{workspace}/{repo_slug} named by both ids (not an item keyed by the workspace);
 * it lists the records whose key field holds the workspace; a POST beside the item's PUT creates
 * the record those ids name; ids shaped like a UUID in braces are UUIDs in braces.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const DESCRIPTION = new URL('../fixtures/factory/workspace-repos.yaml', import.meta.url).pathname;
const SIDECAR = new URL('../fixtures/factory/workspace-repos-sidecar.yaml', import.meta.url).pathname;

describe('a collection at /word/{a} of items at /word/{a}/{b}', () => {
  let sim: OpenApiSimulator;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { authorization: 'Basic dTpw', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: SIDECAR, seed: 2 });
  });
  afterAll(() => sim.close());

  it("lists the workspace's records by pages, and none of another workspace", async () => {
    expect(sim.resources.get('repositories')?.idField).toBe('uuid');
    const first = await call('GET', '/repositories/northwind?pagelen=2');
    expect(first.body.values.map((r: { slug: string }) => r.slug)).toEqual(['repo-1', 'repo-2']);
    expect(first.body.next).toMatch(/\/repositories\/northwind\?pagelen=2&page=2$/);
    for (const r of first.body.values) expect(r.uuid).toMatch(/^\{[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\}$/);
    expect((await call('GET', '/repositories/elsewhere')).body.values).toEqual([]);
  });

  it('creates the record the path names with POST, then gets and updates it by the same ids', async () => {
    const created = await call('POST', '/repositories/northwind/billing-jobs', { name: 'Billing jobs' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ slug: 'billing-jobs', name: 'Billing jobs', workspace: { slug: 'northwind' } });
    expect((await call('GET', '/repositories/northwind/billing-jobs')).body.uuid).toBe(created.body.uuid);
    expect((await call('PUT', '/repositories/northwind/billing-jobs', { name: 'Billing' })).body).toMatchObject({ uuid: created.body.uuid, name: 'Billing' });
    expect((await call('GET', '/repositories/northwind?pagelen=100')).body.values).toHaveLength(6);
  });
});
