/**
 * The sidecar's `deletions`, `changed` and `query` rules over HTTP, on a small description of our own:
 * a DELETE that soft_delete keeps is listed by the deleted-records operation inside its time
 * window (each record as the rule's item), and is gone from the query language's answers; a seed may
 * set the mark (a record deleted before the simulator started). A change feed (`changed`) answers
 * each named resource's records changed since a time, deleted ones included.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const DOC = {
  openapi: '3.0.3',
  info: { title: 'Deletions (test)', version: '1' },
  paths: {
    '/things': {
      post: { requestBody: json({ type: 'object' }), responses: { '201': { description: 'ok', ...json({ $ref: '#/components/schemas/Thing' }) } } },
    },
    '/things/{Id}': {
      parameters: [{ name: 'Id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { responses: { '200': { description: 'ok', ...json({ $ref: '#/components/schemas/Thing' }) } } },
      delete: { responses: { '204': { description: 'gone' } } },
    },
    '/things/deleted': {
      get: {
        parameters: ['start', 'end'].map((name) => ({ name, in: 'query', required: true, schema: { type: 'string' } })),
        responses: { '200': { description: 'ok', ...json({ type: 'object' }) } },
      },
    },
    '/changes': {
      get: {
        parameters: ['entities', 'changedSince'].map((name) => ({ name, in: 'query', required: true, schema: { type: 'string' } })),
        responses: { '200': { description: 'ok', ...json({ type: 'object' }) } },
      },
    },
    '/query': {
      get: {
        parameters: [{ name: 'q', in: 'query', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', ...json({ type: 'object' }) } },
      },
    },
  },
  components: {
    schemas: {
      Thing: { type: 'object', properties: { Id: { type: 'string' }, Name: { type: 'string' }, IsDeleted: { type: 'boolean' }, Modstamp: { type: 'string' } } },
    },
  },
};
const SIDECAR = `
resources:
  things:
    id_field: Id
    records: 4
    timestamps: { created: Modstamp, updated: Modstamp }
    soft_delete: { field: IsDeleted }
    template: { Id: "{{id}}", Name: "Thing {{n}}" }
    seed: [{}, {}, {}, { Name: Gone before, IsDeleted: true }]
deletions:
  "GET /things/deleted": { resource: things, field: Modstamp, since: start, until: end, item: { id: "{{Id}}", deletedDate: "{{Modstamp}}" }, response: { deletedRecords: "{{records}}", latestDateCovered: "{{until}}" } }
changed:
  "GET /changes": { names: entities, since: changedSince, resources: { Thing: things }, field: Modstamp, group: { "{{name}}": "{{records}}", count: "{{count}}" }, response: { Feed: [{ Groups: "{{groups}}" }] } }
query:
  "GET /query": { param: q, resources: { Thing: things }, page_size: 100, response: { totalSize: "{{total}}", records: "{{records}}" } }
`;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: new Description(DOC), sidecar: parseSidecar(SIDECAR), rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const get = async (path: string): Promise<Rec> => (await (await fetch(`${sim.url}${path}`, { headers: { authorization: 'Bearer t' } })).json()) as Rec;

describe('deletions and changed rules', () => {
  it("lists the records a DELETE marked, inside the window, as the rule's item; the query no longer finds them", async () => {
    const ids = ((await get('/query?q=SELECT+Id+FROM+Thing'))['records'] as Rec[]).map((r) => r['Id'] as string);
    expect(ids).toHaveLength(3);
    const before = new Date(Date.now() - 1000).toISOString();
    const gone = await fetch(`${sim.url}/things/${ids[1]}`, { method: 'DELETE', headers: { authorization: 'Bearer t' } });
    expect(gone.status).toBe(204);
    const end = new Date(Date.now() + 1000).toISOString();
    const deleted = await get(`/things/deleted?start=${before}&end=${end}`);
    expect(deleted['latestDateCovered']).toBe(end);
    expect(deleted['deletedRecords']).toEqual([{ id: ids[1], deletedDate: expect.any(String) }]);
    // Before the delete: only the record seeded deleted (stamped at the seed time).
    const earlier = (await get(`/things/deleted?start=2020-01-01T00:00:00Z&end=${before}`))['deletedRecords'] as Rec[];
    expect(earlier).toEqual([{ id: expect.not.stringMatching(ids[1]!), deletedDate: '2026-01-01T00:03:00.000Z' }]);
    const left = await get('/query?q=SELECT+Id,+Name+FROM+Thing+WHERE+IsDeleted+=+false');
    expect(left['totalSize']).toBe(2);
    expect((left['records'] as Rec[]).map((r) => r['Id'])).toEqual([ids[0], ids[2]]);
  });

  it("a change feed answers each named resource's records changed since a time, the deleted ones as marked", async () => {
    // (The store outlives reset(): records the test above changed may be in the feed too.)
    const [renamed, deleted] = ((await get('/query?q=SELECT+Id+FROM+Thing'))['records'] as Rec[]).map((r) => r['Id'] as string);
    const before = new Date(Date.now() - 1000).toISOString();
    sim.updateRecord('things', renamed!, { Name: 'Renamed' });
    await fetch(`${sim.url}/things/${deleted}`, { method: 'DELETE', headers: { authorization: 'Bearer t' } });
    const feed = await get(`/changes?entities=thing&changedSince=${before}`);
    const group = ((feed['Feed'] as Rec[])[0]!['Groups'] as Rec[])[0]!;
    const mine = (group['Thing'] as Rec[]).filter((r) => r['Id'] === renamed || r['Id'] === deleted);
    expect(mine.map((r) => [r['Id'], r['Name'], r['IsDeleted']])).toEqual([
      [renamed, 'Renamed', false],
      [deleted, expect.stringMatching(/^Thing /), true],
    ]);
    expect(group['count']).toBe((group['Thing'] as Rec[]).length);
    expect((await get('/changes?entities=Thing&changedSince=2100-01-01T00:00:00Z'))['Feed']).toEqual([{ Groups: [{ Thing: [], count: 0 }] }]);
    const refused = await fetch(`${sim.url}/changes?entities=Widget&changedSince=${before}`, { headers: { authorization: 'Bearer t' } });
    expect(refused.status).toBe(400);
  });

  it('refuses a rule over a resource that keeps no deleted records', async () => {
    const sidecar = parseSidecar(SIDECAR.replace('    soft_delete: { field: IsDeleted }\n', ''));
    await expect(startOpenApiSimulator({ description: new Description(DOC), sidecar })).rejects.toThrow(/declares no soft_delete/);
  });
});
