/**
 * Outlook's quirks: connectors/outlook/connector.yaml (with ../_shared/microsoft.yaml, the parts
 * every Microsoft Graph connector shares) run by the interpreter over real HTTP against the generic
 * simulator serving Graph's own description (trimmed by trim.mjs). What every connector shares is
 * the conformance suite's; here: the tenant in the identity platform's OAuth URLs (and a tenant
 * that is no tenant refused), lists followed through @odata.nextLink, modified_since written into
 * OData's $filter (joined to the caller's), a send (202 without a body) whose record is Graph's
 * request-id, subscriptions renewed and deleted, and messages synced per mail folder through each
 * folder's delta query: each folder's @odata.deltaLink followed by the next run (against the
 * simulator), and for what the simulator keeps no record of (removals, an expired link), a stand-in
 * fetch answering as Graph's message delta does: @removed messages leave search, a 410
 * syncStateNotFound relists that folder alone.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl } from '../../src/auth/index.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { OAuth2Auth } from '../../src/manifest/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/outlook';
const manifest = getConnector('outlook');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Rec;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const outlook = (fetchImpl?: FetchLike) =>
  new ConnectorRuntime(manifest, CREDENTIALS, {
    ...(fetchImpl ? { fetch: fetchImpl } : { baseUrl: sim.url }),
    limiter: null,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });

describe('outlook', () => {
  it('names the tenant in the OAuth URLs (shared with every Graph connector); a tenant that is none is refused', () => {
    const oauth = manifest.manifest.auth.find((v): v is OAuth2Auth => v.type === 'oauth2')!;
    expect(oauth.scopes).toEqual(['offline_access', 'User.Read', 'Mail.ReadWrite', 'Mail.Send', 'Calendars.ReadWrite', 'Contacts.ReadWrite']);
    const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    const url = new URL(authorizeUrl(oauth, { clientId: 'app', redirectUri: 'https://sb.example/cb', state: 's', credentials: { tenant } }));
    expect(`${url.origin}${url.pathname}`).toBe(`https://login.microsoftonline.com/${tenant}/oauth2/v2.0/authorize`);
    expect(url.searchParams.get('scope')).toContain('offline_access');
    expect(() => authorizeUrl(oauth, { clientId: 'app', redirectUri: 'https://sb.example/cb', state: 's', credentials: { tenant: 'evil.example' } })).toThrow(
      /tenant/,
    );
  });

  it('follows @odata.nextLink through every page, and writes modified_since into $filter beside the caller’s', async () => {
    const rt = outlook();
    const ids: string[] = [];
    for await (const page of rt.pages('messages', { top: 5 })) ids.push(...((page as ListEnvelope).data as Rec[]).map((m) => m['id'] as string));
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    const listed = sim.requests.filter((r) => r.path === '/me/messages');
    expect(listed.map((r) => r.query.get('$skiptoken') !== null)).toEqual([false, true, true]);
    await rt.execute('messages', 'list', { modified_since: '2026-11-01T00:00:00Z', filter: 'isRead eq false', top: 2 });
    expect(sim.requests.at(-1)!.query.get('$filter')).toBe('lastModifiedDateTime ge 2026-11-01T00:00:00Z and (isRead eq false)');
    await rt.execute('messages', 'list', { filter: 'isRead eq false' });
    expect(sim.requests.at(-1)!.query.get('$filter')).toBe('isRead eq false');
  });

  it('marks a message read and flags it; sends mail (202, no body) with Graph’s request-id as the record', async () => {
    const rt = outlook();
    const first = ((await rt.execute('messages', 'list', { top: 1 })) as ListEnvelope).data[0] as Rec;
    const updated = (await rt.execute('messages', 'update', { message_id: first['id'], is_read: true, flag: { flagStatus: 'flagged' } })) as RecordEnvelope;
    expect(updated.data).toMatchObject({ id: first['id'], isRead: true, flag: { flagStatus: 'flagged' } });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ isRead: true, flag: { flagStatus: 'flagged' } });
    const sent = (await rt.execute('sent_mail', 'create', {
      subject: 'Quarterly numbers',
      body: { contentType: 'text', content: 'See attached.' },
      to_recipients: [{ emailAddress: { address: 'ben@northwind.example' } }],
    })) as RecordEnvelope;
    expect(sent.data).toEqual({ request_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 202 });
    expect(sim.requests.at(-1)!.path).toBe('/me/sendMail');
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      message: {
        subject: 'Quarterly numbers',
        body: { contentType: 'text', content: 'See attached.' },
        toRecipients: [{ emailAddress: { address: 'ben@northwind.example' } }],
      },
    });
  });

  it('subscribes to change notifications: the body sent as its reference names it, and the clientState it echoes kept out of records', async () => {
    const rt = outlook();
    const params = {
      resource: "me/mailFolders('inbox')/messages",
      change_type: 'created,updated,deleted',
      notification_url: 'https://sb.example/api/v1/webhooks/outlook/conn_01',
      expiration_date_time: '2026-12-02T12:00:00Z',
      client_state: 'sb-graph-clientstate-secret',
    };
    const created = ((await rt.execute('subscriptions', 'create', params)) as RecordEnvelope).data as Rec;
    const sent = sim.requests.at(-1)!;
    expect([sent.method, sent.path]).toEqual(['POST', '/subscriptions']);
    expect(JSON.parse(sent.rawBody)).toEqual({
      changeType: 'created,updated,deleted',
      notificationUrl: 'https://sb.example/api/v1/webhooks/outlook/conn_01',
      resource: "me/mailFolders('inbox')/messages",
      expirationDateTime: '2026-12-02T12:00:00Z',
      clientState: 'sb-graph-clientstate-secret',
    });
    expect(created).toMatchObject({ resource: "me/mailFolders('inbox')/messages" });
    expect(JSON.stringify(created)).not.toContain('sb-graph-clientstate');
    const listed = ((await rt.execute('subscriptions', 'list', {})) as ListEnvelope).data as Rec[];
    expect(listed.length).toBeGreaterThan(0);
    expect(JSON.stringify(listed)).not.toContain('sb-graph-clientstate');
    const renewed = (
      (await rt.execute('subscriptions', 'update', { subscription_id: created['id'], expiration_date_time: '2026-12-04T12:00:00Z' })) as RecordEnvelope
    ).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ expirationDateTime: '2026-12-04T12:00:00Z' });
    expect(renewed).not.toHaveProperty('clientState');
    // Deleted (DELETE /subscriptions/{id}, 204): the record names it; a get then finds none.
    const deleted = ((await rt.execute('subscription_deletions', 'create', { subscription_id: created['id'] })) as RecordEnvelope).data;
    expect([sim.requests.at(-1)!.method, sim.requests.at(-1)!.path]).toEqual(['DELETE', `/subscriptions/${String(created['id'])}`]);
    expect(deleted).toEqual({ id: created['id'], deleted: true });
    await expect(rt.execute('subscriptions', 'get', { subscription_id: created['id'] })).rejects.toMatchObject({ code: 'upstream_not_found' });
  });

  describe('messages synced per mail folder through its delta query', () => {
    let tdb: TestDatabase;
    let store: RecordStore;
    beforeAll(async () => {
      tdb = await openTestDatabase('sqlite', [searchMigrations, syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    });
    afterAll(() => tdb.close());
    const engineOver = (fetchImpl?: FetchLike) =>
      new SyncEngine({ database: tdb.database, sink: store, runtimeFor: async () => ({ manifest, runtime: outlook(fetchImpl) }), fullRefreshEvery: 100 });
    const subjects = async (connector: string): Promise<string[]> =>
      (
        await store.search(
          connector,
          'messages',
          { primaryKey: 'id', fields: { id: 'string', subject: 'string' } },
          { query: { sort: [{ subject: 'asc' }] }, fields: ['subject'] },
        )
      ).data.map((d) => String(d['subject']));

    it('reads every folder, then follows each folder’s delta link: only what was stored in it since', async () => {
      const engine = engineOver();
      await engine.register('sim');
      await engine.runOnce('sim');
      const first = await subjects('sim');
      expect(first).toHaveLength(12);
      expect(first).toEqual(expect.arrayContaining(['Q4 roadmap review', 'Draft proposal', 'Offsite agenda', 'Contract renewal']));
      await outlook().execute('messages', 'create', { subject: 'Board minutes' });
      const before = sim.requests.length;
      const inc = await engine.runOnce('sim');
      expect(inc.full).toBe(false);
      const deltas = sim.requests.slice(before).filter((r) => r.path.endsWith('/messages/delta'));
      // One request per folder that had messages (an empty folder's pass ends without a link, so it lists in full: one empty page).
      expect(deltas.filter((r) => r.query.get('$deltatoken') !== null)).toHaveLength(4);
      expect(inc.entities['messages']).toMatchObject({ records: 1 });
      expect(await subjects('sim')).toContain('Board minutes');
      await engine.stop();
    });

    it('removes @removed messages, and lists one folder in full again when Graph answers 410 for its link', async () => {
      const folders = ['inbox-id', 'archive-id'];
      const messages = new Map<string, Rec & { folder: string; seq: number }>();
      let seq = 0;
      const expired = new Set<string>();
      const calls: string[] = [];
      const put = (folder: string, id: string, subject: string, extra: Rec = {}) => messages.set(id, { id, subject, ...extra, folder, seq: ++seq });
      const fetchImpl: FetchLike = async (input) => {
        const url = new URL(String(input));
        const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
        if (url.pathname === '/v1.0/me/mailFolders') return json(200, { value: folders.map((id) => ({ id, displayName: id })) });
        const folder = /^\/v1\.0\/me\/mailFolders\/([^/]+)\/messages\/delta$/.exec(url.pathname)?.[1];
        if (folder === undefined) return json(200, { value: [] });
        calls.push(`${folder}${url.search}`);
        const token = url.searchParams.get('$deltatoken');
        if (token !== null && expired.has(`${folder}:${token}`))
          return json(410, { error: { code: 'syncStateNotFound', message: 'The sync state is not found.' } });
        const all = [...messages.values()].filter((m) => m.folder === folder && m.seq > Number(token ?? 0) && (token !== null || m['@removed'] === undefined));
        const link = `https://graph.microsoft.com/v1.0/me/mailFolders/${folder}/messages/delta?$deltatoken=${String(seq)}`;
        return json(200, { value: all.map(({ seq: _, folder: __, ...m }) => m), '@odata.deltaLink': link });
      };
      put('inbox-id', 'm1', 'Budget');
      put('inbox-id', 'm2', 'Notes');
      put('archive-id', 'a1', 'Old news');
      const engine = engineOver(fetchImpl);
      await engine.register('stub');
      await engine.runOnce('stub');
      expect(calls).toEqual([expect.stringMatching(/^inbox-id\?%24top=100&%24select=id%2Csubject/), expect.stringMatching(/^archive-id\?%24top=100/)]);
      expect(await subjects('stub')).toEqual(['Budget', 'Notes', 'Old news']);

      put('inbox-id', 'm2', 'Notes', { '@removed': { reason: 'deleted' } });
      put('archive-id', 'a2', 'Older news');
      calls.length = 0;
      const inc = await engine.runOnce('stub');
      // Each link requested as Graph gave it.
      expect(calls).toEqual(['inbox-id?$deltatoken=3', 'archive-id?$deltatoken=3']);
      expect(inc.entities['messages']).toMatchObject({ deleted: 1 });
      expect(await subjects('stub')).toEqual(['Budget', 'Old news', 'Older news']);

      // The archive's link expired: the archive alone lists in full; the inbox follows its link.
      expired.add('archive-id:5');
      put('inbox-id', 'm3', 'Plans');
      calls.length = 0;
      await engine.runOnce('stub');
      expect(calls).toEqual(['inbox-id?$deltatoken=5', 'archive-id?$deltatoken=5', expect.stringMatching(/^archive-id\?%24top=100/)]);
      expect(await subjects('stub')).toEqual(['Budget', 'Old news', 'Older news', 'Plans']);
      await engine.stop();
    });
  });
});
