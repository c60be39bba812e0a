/**
 * request.base_url: one action's request goes to a sibling API of the vendor on a host of its own
 * (a documents API whose documents are listed by the vendor's file store), with the same
 * credentials; an explicit base URL (a sandbox, a simulator) replaces it as it replaces the
 * connector's. The upstream is a fetch written here.
 */
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';

const MANIFEST = `
manifest_version: 1
type: sibling
title: Sibling
kind: other
base_url: { default: https://docs.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  documents:
    primary_key: id
    record: { type: object, properties: { id: { type: string } } }
    actions:
      list:
        params: { page_token: { type: string } }
        request: { method: GET, path: /files/v3/files, base_url: "https://files.example.com/", query: { pageToken: "{{params.page_token}}" } }
        response: { records: "{{body.files}}" }
        pagination: { type: next_url, next: "{{body.next}}" }
      get:
        params: { id: { type: string, required: true } }
        request: { method: GET, path: "/v1/documents/{{params.id}}" }
        response: { record: "{{body}}" }
`;
const manifest = loadManifestText(MANIFEST, 'sibling.yaml');

function upstream(next: (url: URL) => string | null): { fetch: never; sent: { url: string; auth: string | null }[] } {
  const sent: { url: string; auth: string | null }[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    sent.push({ url: url.toString(), auth: new Headers(init?.headers).get('authorization') });
    return Response.json(url.pathname.startsWith('/v1/') ? { id: 'd1' } : { files: [{ id: `d${sent.length}` }], next: next(url) });
  };
  return { fetch: fetch as never, sent };
}

describe('request.base_url', () => {
  it("sends that action to the sibling's host with the connector's credentials, the others to the base URL", async () => {
    const { fetch, sent } = upstream(() => null);
    const rt = new ConnectorRuntime(manifest, { token: 't' }, { fetch, limiter: null });
    await rt.execute('documents', 'list', { page_token: 'p1' });
    await rt.execute('documents', 'get', { id: 'd1' });
    expect(sent).toEqual([
      { url: 'https://files.example.com/files/v3/files?pageToken=p1', auth: 'Bearer t' },
      { url: 'https://docs.example.com/v1/documents/d1', auth: 'Bearer t' },
    ]);
  });

  it("follows next-page URLs on the sibling's host only", async () => {
    const { fetch, sent } = upstream((url) => (url.searchParams.has('pageToken') ? null : 'https://files.example.com/files/v3/files?pageToken=p2'));
    const rt = new ConnectorRuntime(manifest, { token: 't' }, { fetch, limiter: null });
    const pages: unknown[] = [];
    for await (const page of rt.pages('documents', {})) pages.push(page.data);
    expect(pages).toEqual([[{ id: 'd1' }], [{ id: 'd2' }]]);
    expect(sent.map((s) => s.url)).toEqual(['https://files.example.com/files/v3/files', 'https://files.example.com/files/v3/files?pageToken=p2']);

    const elsewhere = upstream(() => 'https://docs.example.com/files/v3/files?pageToken=p2');
    const other = new ConnectorRuntime(manifest, { token: 't' }, { fetch: elsewhere.fetch, limiter: null });
    const err = await failure(
      (async () => {
        for await (const page of other.pages('documents', {})) void page;
      })(),
    );
    expect(err.code).toBe('upstream_protocol_error');
    expect(elsewhere.sent).toHaveLength(1);
  });

  it('is replaced by an explicit base URL, as the connector’s is', async () => {
    const { fetch, sent } = upstream(() => null);
    const rt = new ConnectorRuntime(manifest, { token: 't' }, { fetch, limiter: null, baseUrl: 'http://127.0.0.1:9/sim' });
    await rt.execute('documents', 'list', {});
    await rt.execute('documents', 'get', { id: 'd1' });
    expect(sent.map((s) => s.url)).toEqual(['http://127.0.0.1:9/sim/files/v3/files', 'http://127.0.0.1:9/sim/v1/documents/d1']);
  });

  it('takes only an https URL without variables', () => {
    for (const bad of ['http://files.example.com', 'https://{{credentials.host}}.example.com', 'https://files.example.com/?a=1'])
      expect(() => loadManifestText(MANIFEST.replace('https://files.example.com/', bad), 'sibling.yaml'), bad).toThrow(/base_url/);
  });
});
