/**
 * Gmail's quirks: the shared Google parts it extends (OAuth endpoints, offline access, error body,
 * 403 rateLimitExceeded), and its sync through the History API: changes after the newest
 * historyId stored, a deleted message (its get answers 404) leaving search, and an expired
 * history id (404) listing the mailbox in full again. The upstream is a stand-in fetch answering
 * as Gmail does (the generic simulator serves the history as a fixed example).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, SwitchboardError } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

const gmail = getConnector('gmail');
const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A mailbox: messages with history ids; history after `oldest` is kept, older is 404 as Gmail answers it. */
class Mailbox {
  messages = new Map<string, { id: string; threadId: string; historyId: string; labelIds: string[]; snippet: string }>();
  history: { id: string; messages: { id: string; threadId: string }[] }[] = [];
  oldest = 0;
  calls: string[] = [];
  private h = 1000;
  put(id: string, snippet: string, labelIds = ['INBOX']): void {
    const historyId = String(++this.h);
    this.messages.set(id, { id, threadId: id, historyId, labelIds, snippet });
    this.history.push({ id: historyId, messages: [{ id, threadId: id }] });
  }
  remove(id: string): void {
    this.messages.delete(id);
    this.history.push({ id: String(++this.h), messages: [{ id, threadId: id }] });
  }
  fetch: FetchLike = async (input) => {
    const url = new URL(String(input));
    this.calls.push(`${url.pathname.replace('/gmail/v1/users/me', '')}${url.search}`);
    if (url.pathname === '/gmail/v1/users/me/messages')
      return json(200, { messages: [...this.messages.values()].map(({ id, threadId }) => ({ id, threadId })), resultSizeEstimate: this.messages.size });
    const one = /^\/gmail\/v1\/users\/me\/messages\/([^/]+)$/.exec(url.pathname);
    if (one) {
      const m = this.messages.get(one[1]!);
      return m ? json(200, m) : json(404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
    }
    if (url.pathname === '/gmail/v1/users/me/labels') return json(200, { labels: [{ id: 'INBOX', name: 'INBOX', type: 'system' }] });
    if (url.pathname === '/gmail/v1/users/me/history') {
      const start = Number(url.searchParams.get('startHistoryId'));
      if (start < this.oldest) return json(404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
      const after = this.history.filter((r) => Number(r.id) > start);
      // Gmail leaves history out when nothing changed.
      return json(200, { ...(after.length > 0 ? { history: after } : {}), historyId: String(this.h) });
    }
    return json(404, { error: { code: 404, message: 'Not Found', status: 'NOT_FOUND' } });
  };
}

describe('gmail', () => {
  it('extends the shared Google parts: OAuth with offline access, its own scope, Google error bodies', async () => {
    const oauth = gmail.manifest.auth.find((v) => v.name === 'oauth');
    expect(oauth).toMatchObject({
      type: 'oauth2',
      authorize_url: 'https://accounts.google.com/o/oauth2/v2/auth',
      token_url: 'https://oauth2.googleapis.com/token',
      scopes: ['https://www.googleapis.com/auth/gmail.modify'],
      authorize_params: { access_type: 'offline', prompt: 'consent' },
      refreshes: true,
    });
    const limited: FetchLike = async () =>
      json(403, {
        error: {
          code: 403,
          message: 'User-rate limit exceeded.',
          status: 'PERMISSION_DENIED',
          errors: [{ message: 'User-rate limit exceeded.', domain: 'usageLimits', reason: 'userRateLimitExceeded' }],
        },
      });
    const rt = new ConnectorRuntime(gmail, { access_token: 'ya29.t' }, { fetch: limited, limiter: null, retry: { maxAttempts: 1 } });
    const e = await rt.execute('labels', 'list', {}).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SwitchboardError);
    expect((e as SwitchboardError).code).toBe('upstream_rate_limited');
    expect((e as SwitchboardError).message).toContain('User-rate limit exceeded.');
  });

  describe('sync through the History API', () => {
    let tdb: TestDatabase;
    let store: RecordStore;
    let engine: SyncEngine;
    const box = new Mailbox();
    const fields = { id: 'string', snippet: 'string' } as Record<string, 'string'>;
    beforeAll(async () => {
      tdb = await openTestDatabase('sqlite');
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
      engine = new SyncEngine({
        database: tdb.database,
        sink: store,
        runtimeFor: async () => ({ manifest: gmail, runtime: new ConnectorRuntime(gmail, { access_token: 'ya29.t' }, { fetch: box.fetch, limiter: null }) }),
        fullRefreshEvery: 100,
      });
    });
    afterAll(async () => {
      await engine.stop();
      await tdb.close();
    });
    const stored = async (): Promise<string[]> =>
      (await store.search('g', 'messages', { primaryKey: 'id', fields }, { query: { sort: [{ id: 'asc' }] }, fields: ['id', 'snippet'] })).data.map(
        (d) => `${String(d['id'])}:${String(d['snippet'])}`,
      );

    it('lists in full, then reads the history after the newest historyId; a deleted message leaves; an expired history id lists in full', async () => {
      box.put('18c1f2a3b4d5e6a1', 'budget');
      box.put('18c1f2a3b4d5e6a2', 'invoice');
      await engine.register('g');
      await engine.runOnce('g');
      expect(await stored()).toEqual(['18c1f2a3b4d5e6a1:budget', '18c1f2a3b4d5e6a2:invoice']);
      expect(box.calls).toContain('/messages/18c1f2a3b4d5e6a1?format=metadata');

      box.put('18c1f2a3b4d5e6a1', 'budget v2', ['INBOX', 'STARRED']);
      box.remove('18c1f2a3b4d5e6a2');
      box.calls = [];
      const inc = await engine.runOnce('g');
      expect(box.calls.filter((c) => c.startsWith('/history'))).toEqual(['/history?startHistoryId=1002&maxResults=500']);
      expect(inc.entities['messages']).toMatchObject({ deleted: 1 });
      expect(await stored()).toEqual(['18c1f2a3b4d5e6a1:budget v2']);

      box.put('18c1f2a3b4d5e6a3', 'offsite');
      box.oldest = 2000;
      box.calls = [];
      await engine.runOnce('g');
      expect(box.calls.filter((c) => !c.startsWith('/messages/') && c !== '/labels')).toEqual([
        '/history?startHistoryId=1003&maxResults=500',
        '/messages?maxResults=500',
      ]);
      expect(await stored()).toEqual(['18c1f2a3b4d5e6a1:budget v2', '18c1f2a3b4d5e6a3:offsite']);
    });
  });
});
