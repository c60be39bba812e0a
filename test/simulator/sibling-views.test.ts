/**
 * A resource listed by a sibling API and written by a custom method, on a small description of our
 * own (a "notes" API whose notes a file store lists): `operations.<op>.item` answers each record
 * as that list's view of it, and a write answered with a schema of its own (a batch write's
 * `{noteId, replies}`) takes the record's fields it declares with the sidecar's example of the
 * operation filling the rest; a missing record is still 404; and `operations.<op>.collections`
 * answers every record of a resource under a key of an answer holding several (a sync endpoint's).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, startOpenApiSimulator, type OpenApiSimulator, type Sidecar } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;
const json = (ref: string): Rec => ({ '200': { description: 'ok', content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } } });
const DOC = {
  openapi: '3.0.3',
  info: { title: 'Notes (test)', version: '1' },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Note: { type: 'object', properties: { noteId: { type: 'string' }, title: { type: 'string' }, text: { type: 'string' } } },
      File: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, mimeType: { type: 'string' } } },
      FileList: { type: 'object', properties: { files: { type: 'array', items: { $ref: '#/components/schemas/File' } }, nextPageToken: { type: 'string' } } },
      BatchRequest: { type: 'object', properties: { requests: { type: 'array', items: { type: 'object' } } } },
      BatchResponse: { type: 'object', properties: { noteId: { type: 'string' }, replies: { type: 'array', items: { type: 'object' } } } },
      SyncResponse: { type: 'object', properties: { sync_token: { type: 'string' }, notes: { type: 'array', items: { $ref: '#/components/schemas/Note' } } } },
    },
  },
  security: [{ bearer: [] }],
  paths: {
    '/files/v1/files': {
      get: {
        parameters: [
          { name: 'pageToken', in: 'query', schema: { type: 'string' } },
          { name: 'pageSize', in: 'query', schema: { type: 'integer' } },
        ],
        responses: json('FileList'),
      },
    },
    '/v1/notes/{noteId}': { get: { parameters: [{ name: 'noteId', in: 'path', required: true, schema: { type: 'string' } }], responses: json('Note') } },
    '/v1/sync': { post: { responses: json('SyncResponse') } },
    '/v1/notes/{noteId}:batchUpdate': {
      post: {
        parameters: [{ name: 'noteId', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchRequest' } } } },
        responses: json('BatchResponse'),
      },
    },
  },
};
const SIDECAR: Sidecar = {
  auth: { tokens: ['tok'] },
  pagination: { cursor_param: 'pageToken', limit_param: 'pageSize', next_cursor: 'nextPageToken' },
  resources: {
    notes: {
      id_param: 'noteId',
      list: 'GET /files/v1/files',
      get: 'GET /v1/notes/{noteId}',
      update: 'POST /v1/notes/{noteId}:batchUpdate',
      records: 3,
      template: { noteId: '{{id}}', title: 'Note {{n}}', text: 'Text {{n}}' },
    },
  },
  operations: {
    'GET /files/v1/files': { item: { id: '{{noteId}}', name: '{{title}}', mimeType: 'application/x-note' } },
    'POST /v1/notes/{noteId}:batchUpdate': { example: { replies: [{ replaced: 2 }], noteId: 'not-this-one' } },
    'POST /v1/sync': { example: { sync_token: 'tok1' }, collections: { notes: 'notes' } },
  },
};

let sim: OpenApiSimulator;
const call = async (path: string, body?: Rec): Promise<{ status: number; body: Rec }> => {
  const r = await fetch(`${sim.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: 'Bearer tok', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.json()) as Rec };
};

beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: new Description(structuredClone(DOC) as never), sidecar: SIDECAR });
});
afterAll(() => sim.close());

describe('a resource seen through a sibling API', () => {
  it("lists the records as the list's item view, paged as the list pages", async () => {
    const first = await call('/files/v1/files?pageSize=2');
    const files = first.body['files'] as Rec[];
    expect(files).toHaveLength(2);
    expect(files[0]).toEqual({ id: expect.any(String), name: 'Note 1', mimeType: 'application/x-note' });
    const note = await call(`/v1/notes/${String(files[0]!['id'])}`);
    expect(note.body).toMatchObject({ noteId: files[0]!['id'], title: 'Note 1', text: 'Text 1' });
    const second = await call(`/files/v1/files?pageSize=2&pageToken=${String(first.body['nextPageToken'])}`);
    expect((second.body['files'] as Rec[]).map((f) => f['name'])).toEqual(['Note 3']);
  });

  it("answers a custom method's write with the record's id and the example's replies, and 404 for a missing record", async () => {
    const id = String(((await call('/files/v1/files')).body['files'] as Rec[])[1]!['id']);
    const written = await call(`/v1/notes/${id}:batchUpdate`, { requests: [{ replaceAllText: {} }] });
    expect(written).toEqual({ status: 200, body: { noteId: id, replies: [{ replaced: 2 }] } });
    expect((await call('/v1/notes/nothing-here:batchUpdate', { requests: [] })).status).toBe(404);
  });

  it('fills a collection of an answer holding several resources with every record of the resource', async () => {
    const synced = await call('/v1/sync', {});
    expect(synced.body['sync_token']).toBe('tok1');
    expect((synced.body['notes'] as Rec[]).map((n) => n['title'])).toEqual(['Note 1', 'Note 2', 'Note 3']);
  });
});
