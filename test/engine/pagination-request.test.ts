/**
 * pagination.request: a listing continued elsewhere (Dropbox's POST /2/files/list_folder, then
 * POST /2/files/list_folder/continue with only the cursor) — the first page is the action's own
 * request, every later one (and a call given the cursor) the pagination's. The upstream is a fetch written here.
 */
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';

const MANIFEST = `
manifest_version: 1
type: continued
title: Continued
kind: other
base_url: { default: https://api.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  entries:
    primary_key: id
    record: { type: object, properties: { id: { type: string } } }
    actions:
      list:
        params:
          path: { type: string, required: true }
          limit: { type: integer }
          cursor: { type: string }
        request: { method: POST, path: /2/files/list_folder, body: { path: "{{params.path}}", limit: "{{params.limit}}" } }
        response: { records: "{{body.entries}}" }
        pagination:
          type: cursor
          param: cursor
          next: "{{body.cursor}}"
          has_more: "{{body.has_more}}"
          request: { method: POST, path: /2/files/list_folder/continue, body: { cursor: "{{params.cursor}}" } }
`;
const manifest = loadManifestText(MANIFEST, 'continued.yaml');

describe('pagination.request', () => {
  it('sends the first page with the action request and the next ones with the pagination request, the cursor alone', async () => {
    const sent: { path: string; body: unknown }[] = [];
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
      sent.push({ path: new URL(String(input)).pathname, body });
      const n = sent.length;
      return Response.json({ entries: [{ id: `e${n}` }], cursor: `c${n}`, has_more: n < 3 });
    };
    const rt = new ConnectorRuntime(manifest, { token: 't' }, { fetch: fetch as never, limiter: null });
    const ids: unknown[] = [];
    for await (const page of rt.pages('entries', { path: '/Reports', limit: 1 })) ids.push(...(page.data as { id: string }[]).map((e) => e.id));
    expect(ids).toEqual(['e1', 'e2', 'e3']);
    expect(sent).toEqual([
      { path: '/2/files/list_folder', body: { path: '/Reports', limit: 1 } },
      { path: '/2/files/list_folder/continue', body: { cursor: 'c1' } },
      { path: '/2/files/list_folder/continue', body: { cursor: 'c2' } },
    ]);
    await rt.execute('entries', 'list', { path: '/Reports', cursor: 'saved' });
    expect(sent.at(-1)).toEqual({ path: '/2/files/list_folder/continue', body: { cursor: 'saved' } });
  });
});
