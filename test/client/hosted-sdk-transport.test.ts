/** The hosted SDK's transport against a stubbed service (see hosted-sdk.test.ts for the service end to end): retries and their timing. */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { failure } from '../helpers/errors.ts';
import { TOKEN_PATH } from './hosted-sdk-helpers.ts';

describe('the hosted SDK transport with a stubbed service', () => {
  /** A service answering the token endpoint, then the given responses in order; every call timed. */
  function stub(responses: (() => Response)[]): { fetch: FetchLike; calls: { path: string; at: number }[] } {
    const calls: { path: string; at: number }[] = [];
    return {
      calls,
      fetch: async (input) => {
        const path = new URL(input).pathname;
        calls.push({ path, at: Date.now() });
        if (path.endsWith(TOKEN_PATH)) return Response.json({ access_token: 'sbt_stub', token_type: 'Bearer', expires_in: 3600 });
        const next = responses.shift();
        if (next === undefined) throw new Error('unexpected request');
        return next();
      },
    };
  }
  const limited =
    (headers: Record<string, string> = {}) =>
    () =>
      new Response(JSON.stringify({ code: 'rate_limited', status: 429, detail: 'slow down', details: { limit_per_minute: 60 } }), {
        status: 429,
        headers: { 'content-type': 'application/problem+json', ...headers },
      });
  const page = () => Response.json({ data: [], meta: { cursor: null, has_more: false } });
  const apiCalls = (s: { calls: { path: string; at: number }[] }) => s.calls.filter((c) => c.path !== TOKEN_PATH);

  it('backs off a second when a 429 carries no Retry-After, and reads an HTTP-date Retry-After', async () => {
    const s = stub([limited(), page, () => limited({ 'retry-after': new Date(Date.now() + 2_000).toUTCString() })(), page]);
    const c = createClient({ baseUrl: 'http://switchboard.test', customerName: 'c', clientId: 'id', clientSecret: 'secret', fetch: s.fetch });
    await c.connectors.list();
    const [a, b] = apiCalls(s);
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(950);
    await c.connectors.list();
    const [, , x, y] = apiCalls(s);
    // The date has one-second precision: between 1 and 2 s from now.
    expect(y!.at - x!.at).toBeGreaterThanOrEqual(900);
    expect(y!.at - x!.at).toBeLessThan(2_500);
  });

  it('resolves the token endpoint under the base URL path, like every other endpoint', async () => {
    const s = stub([page]);
    const c = createClient({ baseUrl: 'http://switchboard.test/switchboard/', customerName: 'c', clientId: 'id', clientSecret: 'secret', fetch: s.fetch });
    await c.connectors.list();
    expect(s.calls.map((x) => x.path)).toEqual(['/switchboard/api/v1/account/applications/token', '/switchboard/api/v1/integrations/connectors']);
  });

  it('gives up after maxAttempts with the last problem as a SwitchboardError', async () => {
    const s = stub([limited({ 'retry-after': '0' }), limited({ 'retry-after': '0' })]);
    const c = createClient({ baseUrl: 'http://switchboard.test', customerName: 'c', clientId: 'id', clientSecret: 'secret', fetch: s.fetch, maxAttempts: 2 });
    const e = await failure(c.connectors.list());
    expect(e).toMatchObject({ code: 'rate_limited', status: 429, message: 'slow down', details: { limit_per_minute: 60 } });
    expect(apiCalls(s)).toHaveLength(2);
  });
});
