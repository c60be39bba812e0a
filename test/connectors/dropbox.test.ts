/**
 * Dropbox's quirks (every entity × action is the conformance suite's): a folder listing continued
 * elsewhere (POST /files/list_folder, then /files/list_folder/continue with the cursor alone), its
 * last cursor kept as the folder's state (continued later, it answers what changed since: the
 * incremental sync), deleted entries (no id) left out, 409 endpoint errors read from their tags,
 * shared-link settings as Stone unions ({".tag": ...}), and the OAuth app flow with offline access.
 * Against the generic simulator on our derivation (openapi.json) and its sidecar; no Dropbox code.
 */
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl } from '../../src/auth/index.ts';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver } from '../../src/webhooks/receive.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { OAuth2Auth } from '../../src/manifest/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;
const DIR = new URL('../../connectors/dropbox/', import.meta.url).pathname;
const manifest = getConnector('dropbox');
const TOKEN = 'sl.u.AFjDsandboxDropboxAccessToken0123456789abcdefXYZ';

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}openapi.json`, sidecar: loadSidecar(`${DIR}simulator.yaml`), seed: 1 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const runtime = () => new ConnectorRuntime(manifest, { access_token: TOKEN }, { baseUrl: sim.url, limiter: null });
const run = (entity: string, action: string, params: Rec) => runtime().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const bodies = (path: string): Rec[] => sim.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.rawBody || 'null') as Rec);

describe('dropbox files', () => {
  it('lists a folder with list_folder, then continues with the cursor alone; the last cursor later answers only what changed', async () => {
    const ids: string[] = [];
    for await (const page of runtime().pages('files', { path: '', recursive: true, limit: 3 })) {
      ids.push(...(page.data as Rec[]).map((r) => String(r['id'])));
      expect(page.meta['cursor']).toEqual(expect.any(String));
    }
    expect(ids).toHaveLength(8);
    for (const id of ids) expect(id).toMatch(/^id:[A-Za-z0-9_-]{22}$/);
    expect(bodies('/files/list_folder')).toEqual([{ path: '', recursive: true, limit: 3 }]);
    const continued = bodies('/files/list_folder/continue');
    expect(continued).toHaveLength(2);
    for (const b of continued) expect(Object.keys(b)).toEqual(['cursor']);

    // The folder's state: the last page's cursor, continued after a change, answers the change alone.
    const last = await run('files', 'list', { path: '', recursive: true, limit: 2000 });
    expect(last.meta['has_more']).toBe(false);
    const made = await run('files', 'create', { path: '/Reports/2026' });
    const since = await run('files', 'list', { cursor: String(last.meta['cursor']) });
    expect(since.data.map((r) => (r as Rec)['id'])).toEqual([made.data['id']]);
    expect(since.data[0]).toMatchObject({ '.tag': 'folder' });
  });

  it('leaves out deleted entries, which carry no id', async () => {
    const answer = {
      entries: [
        { '.tag': 'deleted', name: 'old.txt', path_lower: '/old.txt' },
        { '.tag': 'file', id: 'id:a4ayc_80_OEAAAAAAAAAXw', name: 'q.pdf' },
      ],
      cursor: 'c1',
      has_more: false,
    };
    const fetch = async (): Promise<Response> => Response.json(answer);
    const rt = new ConnectorRuntime(manifest, { token: TOKEN }, { baseUrl: 'https://api.dropboxapi.com/2', fetch: fetch as never, limiter: null });
    const page = (await rt.execute('files', 'list', { cursor: 'c0' })) as ListEnvelope;
    expect(page.data).toEqual([answer.entries[1]]);
    expect(page.meta).toEqual({ cursor: 'c1', has_more: false });
  });

  it('names a file by id or path; a missing one (409 path/not_found, from_lookup/not_found) is upstream_not_found', async () => {
    const got = await run('files', 'get', { path: 'id:a4ayc_80_OEAAAAAAAAAXw' });
    expect(got.data).toMatchObject({ '.tag': 'folder', name: 'Reports', path_display: '/Reports' });
    const missing = await failure(run('files', 'get', { path: 'id:AAAAAAAAAAAAAAAAAAAAAA' }));
    expect(missing.code).toBe('upstream_not_found');
    expect(missing.message).toContain('path/not_found');
    const moved = await failure(run('files', 'update', { from_path: 'id:AAAAAAAAAAAAAAAAAAAAAA', to_path: '/Archive/x.pdf' }));
    expect(moved.code).toBe('upstream_not_found');
    expect(moved.message).toContain('from_lookup/not_found');
    const renamed = await run('files', 'update', { from_path: 'id:a4ayc_80_OEAAAAAAAAAXw', to_path: '/Reports 2026' });
    expect(renamed.data).toMatchObject({ id: 'id:a4ayc_80_OEAAAAAAAAAXw', path_display: '/Reports 2026' });
  });
});

describe('dropbox shared links', () => {
  it('sends link settings as the tagged unions Dropbox reads, and pages the list by cursor in the same route', async () => {
    const link = await run('shared_links', 'create', {
      path: '/Reports/Q4 board deck.pdf',
      requested_visibility: 'team_only',
      access: 'viewer',
      allow_download: false,
    });
    expect(link.data['url']).toMatch(/^https:\/\/www\.dropbox\.com\/scl\/fi\//);
    expect(bodies('/sharing/create_shared_link_with_settings')).toEqual([
      { path: '/Reports/Q4 board deck.pdf', settings: { requested_visibility: { '.tag': 'team_only' }, access: { '.tag': 'viewer' }, allow_download: false } },
    ]);
    const urls: string[] = [];
    for await (const page of runtime().pages('shared_links', {})) urls.push(...(page.data as Rec[]).map((r) => String(r['url'])));
    expect(urls).toHaveLength(4);
    const listed = bodies('/sharing/list_shared_links');
    expect(listed[0]).toEqual({});
    expect(listed[1]).toEqual({ cursor: expect.any(String) });
  });
});

describe('dropbox auth', () => {
  it('asks for offline access (a refresh token) and checks the token with users/get_current_account', async () => {
    const oauth = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
    const url = new URL(authorizeUrl(oauth, { clientId: 'app-key', redirectUri: 'https://sb.example/cb', state: 's' }));
    expect(url.origin + url.pathname).toBe('https://www.dropbox.com/oauth2/authorize');
    expect(url.searchParams.get('token_access_type')).toBe('offline');
    const checked = await runtime().check();
    expect(checked.info).toMatchObject({ account_id: 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc', email: 'ada@northwind.example', name: 'Ada Okafor' });
    const refused = await failure(new ConnectorRuntime(manifest, { token: 'sl.u.revoked' }, { baseUrl: sim.url, limiter: null }).check());
    expect(refused.code).toBe('upstream_credentials_rejected');
  });
});

describe('dropbox webhooks', () => {
  it('echoes the GET challenge; a signed notice naming accounts requests their connectors’ syncs; a forged one is refused', async () => {
    const database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    const synced: string[] = [];
    const r = new WebhookReceiver({
      db: database.db as unknown as Kysely<EventsTables>,
      registry: new Map([['dropbox', manifest]]),
      applier: () => ({}) as ChangeApplier,
      secretFor: (_t, kind) => (kind === 'oauth_client_secret' ? 'app-secret-9x' : undefined),
      connector: async () => undefined,
      attributions: {
        connectorsWithKey: async (_t: string, key: string) => (key === 'dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc' ? ['conn-ada'] : []),
        hasPending: async () => false,
      } as unknown as WebhookAttributions,
      runtimeFor: async () => undefined,
      requestSync: async (id) => (synced.push(id), true),
      now: Date.now,
      queueLimit: 4,
    });
    const at = { type: 'dropbox', ingressUrl: 'https://sb.example/api/v1/webhooks/dropbox' };
    expect(await r.receive({ ...at, headers: {}, query: { challenge: 'kT7xQ2vN9p' }, raw: Buffer.alloc(0) })).toEqual({
      status: 200,
      body: 'kT7xQ2vN9p',
      contentType: 'text/plain',
    });
    const raw = JSON.stringify({ list_folder: { accounts: ['dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc'] }, delta: { users: [12345678] } });
    const sign = (key: string) => ({ 'x-dropbox-signature': createHmac('sha256', key).update(raw).digest('hex') });
    expect(await r.receive({ ...at, headers: sign('app-secret-9x'), raw: Buffer.from(raw) })).toMatchObject({
      status: 200,
      body: { topic: 'list_folder', entity: 'files', sync_requested: ['conn-ada'] },
    });
    expect(synced).toEqual(['conn-ada']);
    await expect(r.receive({ ...at, headers: sign('another-secret'), raw: Buffer.from(raw) })).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    await database.close();
  });
});
