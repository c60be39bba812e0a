/**
 * The generic simulator on records named by an id within their parent (GitLab's issues by iid
 * under /projects/{project_id}) with records under them (an issue's notes under
 * /projects/{project_id}/issues/{issue_iid}/notes): our own test/fixtures/factory/nested-iids.yaml.
 * Seeded notes sit under seeded issues (parents seeded before their children, at any depth; the
 * project named through the sidecar's key), and a parent's id filled into a number field of a
 * template stays a number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, any>;
const DESCRIPTION = new URL('../fixtures/factory/nested-iids.yaml', import.meta.url).pathname;
const SIDECAR = new URL('../fixtures/factory/nested-iids-sidecar.yaml', import.meta.url).pathname;

describe('records under records named by an id within their parent', () => {
  let sim: OpenApiSimulator;
  const get = async (path: string, init?: RequestInit): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${sim.url}${path}`, { ...init, headers: { 'PRIVATE-TOKEN': 't', 'content-type': 'application/json' } });
    return { status: res.status, body: await res.json() };
  };
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: SIDECAR, seed: 5 });
  });
  afterAll(() => sim.close());

  it("seeds every issue's notes under it, and the project ids as numbers", async () => {
    const projects = (await get('/projects')).body as Rec[];
    let notes = 0;
    for (const p of projects) {
      const issues = (await get(`/projects/${String(p.id)}/issues`)).body as Rec[];
      for (const issue of issues) {
        expect(issue.project_id).toBe(p.id);
        const listed = (await get(`/projects/${String(p.id)}/issues/${String(issue.iid)}/notes`)).body as Rec[];
        expect(listed.length, `notes of issue ${String(issue.iid)}`).toBe(2);
        for (const n of listed) expect([n.project_id, n.noteable_iid]).toEqual([p.id, issue.iid]);
        notes += listed.length;
      }
    }
    expect(notes).toBe(12);
  });

  it('a created issue has its project id as a number, and its notes list starts empty', async () => {
    const p = [...sim.resources.get('projects')!.records.keys()][0]!;
    const created = await get(`/projects/${p}/issues`, { method: 'POST', body: JSON.stringify({ title: 'New' }) });
    expect(created.status).toBe(201);
    expect(created.body.project_id).toBe(Number(p));
    expect(typeof created.body.id).toBe('number');
    expect((await get(`/projects/${p}/issues/${String(created.body.iid)}/notes`)).body).toEqual([]);
  });
});

describe("records under records that do not name their own parent (the sidecar key's ^param)", () => {
  let sim: OpenApiSimulator;
  const get = async (path: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${sim.url}${path}`, { headers: { 'PRIVATE-TOKEN': 't' } });
    return { status: res.status, body: await res.json() };
  };
  beforeAll(async () => {
    const sidecar = new URL('../fixtures/factory/nested-parents-sidecar.yaml', import.meta.url).pathname;
    sim = await startOpenApiSimulator({ description: DESCRIPTION, sidecar, seed: 5 });
  });
  afterAll(() => sim.close());

  it('seeds notes under each issue through the project it was made under; another project is 404', async () => {
    const projects = (await get('/projects')).body as Rec[];
    let notes = 0;
    for (const p of projects) {
      for (const issue of (await get(`/projects/${String(p.id)}/issues`)).body as Rec[]) {
        expect(issue.project_id).toBeUndefined();
        const listed = (await get(`/projects/${String(p.id)}/issues/${String(issue.iid)}/notes`)).body as Rec[];
        expect(listed.map((n) => [n.project_id, n.noteable_iid])).toEqual([
          [p.id, issue.iid],
          [p.id, issue.iid],
        ]);
        notes += listed.length;
        const other = projects.find((q) => q.id !== p.id)!;
        expect((await get(`/projects/${String(other.id)}/issues/${String(issue.iid)}/notes`)).status).toBe(404);
      }
    }
    expect(notes).toBe(12);
  });
});
