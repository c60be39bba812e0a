/**
 * A Connect session makes one connection, however many submits arrive at once (issue 21, item
 * 5): the session is claimed by one atomic UPDATE before the upstream credential check, so six
 * or twenty parallel credential POSTs with one cookie and CSRF token create exactly one
 * connector, on SQLite and PostgreSQL, even while that check is slow; the others answer 409 at
 * once. A failed check releases the claim, so the user can correct the key and submit again.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, startHosted, type Harness } from './helpers.ts';

const SESSIONS = '/api/v1/integrations/connect/sessions';
const CONNECTORS = '/api/v1/integrations/connectors';
const GOOD_KEY = 'grn_good_key_5f2c';

/** A Granola stand-in whose credential checks wait at a gate the test opens. */
interface Upstream {
  url: string;
  arrived: number;
  hold: boolean;
  open(): void;
  close(): Promise<void>;
}

async function gatedUpstream(): Promise<Upstream> {
  let waiting: (() => void)[] = [];
  const state = {
    arrived: 0,
    hold: false,
    url: '',
    open(): void {
      const w = waiting;
      waiting = [];
      for (const f of w) f();
    },
    close: async (): Promise<void> => {
      state.open();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    if (req.headers.authorization !== `Bearer ${GOOD_KEY}`)
      return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"Unauthorized"}');
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"notes":[{"id":"not_1","title":"t"}],"hasMore":false,"cursor":null}');
  };
  const server: Server = createServer((req, res) => {
    state.arrived += 1;
    if (state.hold) waiting.push(() => answer(req, res));
    else answer(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

describeEachDialect('Connect session single use on %s', (dialect) => {
  let upstream: Upstream;
  let h: Harness;
  let token: string;

  beforeAll(async () => {
    upstream = await gatedUpstream();
    ({ h, token } = await startHosted(dialect, { org: 'single-use-org', upstreams: { granola: upstream.url } }));
  });
  afterAll(async () => {
    await h?.close();
    await upstream?.close();
  });

  /** A session opened in a browser: its cookie and the CSRF token of the Granola form. */
  async function openSession(customer: string): Promise<{ cookie: string; csrf: string }> {
    const created = await h.request('POST', SESSIONS, { token, body: { customer_name: customer, allowed_connector_types: ['granola'] } });
    expect(created.status, created.text).toBe(201);
    const x = await h.request('POST', '/connect/session', { body: { token: created.body.token } });
    expect(x.status).toBe(204);
    const cookie = /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1] as string;
    const form = await fetch(`${h.url}/connect/types/granola`, { headers: { cookie: `sb_connect=${cookie}` } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] as string;
    expect(csrf).toBeTruthy();
    return { cookie, csrf };
  }

  const submit = async (s: { cookie: string; csrf: string }, apiKey: string): Promise<number> => {
    const res = await fetch(`${h.url}/connect/types/granola/credentials`, {
      method: 'POST',
      headers: { cookie: `sb_connect=${s.cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: s.csrf, variant: 'api_key', 'field.api_key': apiKey }).toString(),
    });
    await res.text();
    return res.status;
  };

  const connectorsOf = async (customer: string): Promise<number> =>
    (await h.request('GET', `${CONNECTORS}?customer_name=${customer}`, { token })).body.data.length;

  it('six parallel submits with one cookie and CSRF token create exactly one connector', async () => {
    const s = await openSession('six');
    const statuses = await Promise.all(Array.from({ length: 6 }, () => submit(s, GOOD_KEY)));
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    // The others: 409 while the first is connecting, or 410 once it has finished.
    expect(statuses.filter((x) => x !== 200).every((x) => x === 409 || x === 410)).toBe(true);
    expect(await connectorsOf('six')).toBe(1);
  });

  it('twenty parallel submits while the upstream check is slow: one check, one connector, nineteen 409s at once', async () => {
    const s = await openSession('twenty');
    upstream.hold = true;
    const before = upstream.arrived;
    let settled = 0;
    const all = Promise.all(
      Array.from({ length: 20 }, async () => {
        const status = await submit(s, GOOD_KEY);
        settled += 1;
        return status;
      }),
    );
    // Open the gate once every submit is either answered or waiting at the upstream (without
    // the claim all twenty reach it; with it, one does and nineteen are answered first).
    const deadline = Date.now() + 20_000;
    while (settled + (upstream.arrived - before) < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    upstream.hold = false;
    upstream.open();
    const statuses = await all;
    expect(upstream.arrived - before).toBe(1);
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 409)).toHaveLength(19);
    expect(await connectorsOf('twenty')).toBe(1);
    // Used: a later submit is told so.
    expect(await submit(s, GOOD_KEY)).toBe(410);
  });

  it('a refused key releases the claim: the corrected key then connects, once', async () => {
    const s = await openSession('retry');
    expect(await submit(s, 'grn_wrong_key')).toBe(424);
    expect(await connectorsOf('retry')).toBe(0);
    const statuses = await Promise.all(Array.from({ length: 4 }, () => submit(s, GOOD_KEY)));
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(await connectorsOf('retry')).toBe(1);
  });
});
