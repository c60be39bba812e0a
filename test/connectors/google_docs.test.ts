/**
 * Google Docs' quirks: the Docs API lists no documents, so the list is Drive's files.list on
 * www.googleapis.com (request.base_url) filtered to Google Docs files and read as documents (id →
 * documentId, name → title), with modified_after and the caller's own query joined into Drive's q;
 * the check is Drive's about on the same host; a get carries the text of the body's paragraphs; an
 * update is one batchUpdate of the requests given, answering one reply per request. Reads and
 * writes run against the simulator (which serves both APIs' paths on one base URL); the hosts
 * and Drive's query against a stand-in fetch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';
import { startConnectorSimulator, type ConnectorSimulator } from '../helpers/simulators.ts';

const docs = getConnector('google_docs');
type Rec = Record<string, unknown>;

describe('google_docs', () => {
  let sim: ConnectorSimulator;
  let rt: ConnectorRuntime;
  beforeAll(async () => {
    sim = await startConnectorSimulator('google_docs');
    rt = new ConnectorRuntime(docs, sim.credentials, { baseUrl: sim.baseUrl, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  });
  afterAll(() => sim?.close());

  it("lists documents through Drive, reads one with its paragraphs' text, and batch-updates it", async () => {
    const listed = (await rt.execute('documents', 'list', { page_size: 2 })) as ListEnvelope;
    expect(listed.data.map((d) => d['title'])).toEqual(['Apollo kickoff notes', 'Launch checklist']);
    expect(listed.meta['next_page_token']).toEqual(expect.any(String));
    const document_id = listed.data[0]!['documentId'] as string;
    expect(document_id).toBe(listed.data[0]!['id']);
    const got = ((await rt.execute('documents', 'get', { document_id })) as RecordEnvelope).data;
    expect(got).toMatchObject({ documentId: document_id, title: 'Apollo kickoff notes', text: 'Notes for document 1\n' });
    const requests = [{ replaceAllText: { containsText: { text: '{{customer}}', matchCase: true }, replaceText: 'Northwind Labs' } }];
    const updated = ((await rt.execute('documents', 'update', { document_id, requests, required_revision_id: got['revisionId'] })) as RecordEnvelope).data;
    expect(updated).toMatchObject({ documentId: document_id, replies: [{ replaceAllText: { occurrencesChanged: 2 } }] });
    const missing = await failure(rt.execute('documents', 'update', { document_id: `${document_id.slice(0, -4)}zzzz`, requests }));
    expect(missing.code).toBe('upstream_not_found');
    expect((await rt.check()).info).toEqual({ email_address: 'ada.okafor@northwindlabs.com', display_name: 'Ada Okafor' });
  });

  it("sends the list and the check to Drive's host, the rest to Docs', and joins the filters into Drive's q", async () => {
    const calls: { url: URL; method: string; body: unknown }[] = [];
    const upstream: FetchLike = async (input, init) => {
      const url = new URL(String(input));
      calls.push({ url, method: init?.method ?? 'GET', body: init?.body === undefined ? undefined : JSON.parse(String(init.body)) });
      const body: Rec = url.pathname.endsWith('/about')
        ? { user: { emailAddress: 'ada@example.com', displayName: 'Ada' } }
        : url.pathname.endsWith('/files')
          ? { files: [{ id: 'd1', name: 'Plan', modifiedTime: '2026-11-02T10:00:00.000Z' }] }
          : { documentId: 'd1', replies: [{}] };
      return Response.json(body);
    };
    const t = new ConnectorRuntime(docs, { access_token: 'ya29.t' }, { fetch: upstream, limiter: null });
    const listed = (await t.execute('documents', 'list', { modified_after: '2026-11-01T00:00:00Z', q: "name contains 'Plan'" })) as ListEnvelope;
    expect(listed.data[0]).toMatchObject({ documentId: 'd1', title: 'Plan', modifiedTime: '2026-11-02T10:00:00.000Z' });
    expect(`${calls[0]!.url.origin}${calls[0]!.url.pathname}`).toBe('https://www.googleapis.com/drive/v3/files');
    expect(calls[0]!.url.searchParams.get('q')).toBe(
      "mimeType = 'application/vnd.google-apps.document' and trashed = false and modifiedTime > '2026-11-01T00:00:00Z' and (name contains 'Plan')",
    );
    expect(calls[0]!.url.searchParams.get('orderBy')).toBe('modifiedTime desc');
    await t.check();
    expect(`${calls[1]!.url.origin}${calls[1]!.url.pathname}`).toBe('https://www.googleapis.com/drive/v3/about');
    await t.execute('documents', 'update', { document_id: 'd1', requests: [{ insertText: { text: 'Hi', endOfSegmentLocation: {} } }] });
    expect(calls[2]!.url.toString()).toBe('https://docs.googleapis.com/v1/documents/d1:batchUpdate');
    expect(calls[2]!.body).toEqual({ requests: [{ insertText: { text: 'Hi', endOfSegmentLocation: {} } }] });
    await t.execute('documents', 'update', {
      document_id: 'd1',
      requests: [{ deleteContentRange: { range: { startIndex: 1, endIndex: 3 } } }],
      required_revision_id: 'r7',
    });
    expect((calls[3]!.body as Rec)['writeControl']).toEqual({ requiredRevisionId: 'r7' });
  });
});
