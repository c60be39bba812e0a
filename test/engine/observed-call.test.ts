/**
 * The engine's upstream calls as observations (src/observe/hooks.ts, src/engine/observed-call.ts)
 * and as the metrics that count them (src/service/ops/metrics.ts): a call retried after a 503 is one
 * call with one retry, its throttle wait and retry delay, the bytes of both answers, the last
 * status; a call that never got an answer is counted by its error code; nothing of the URL's
 * ids or the credentials reaches an observer. With no observer, nothing is reported.
 */
import { afterEach, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { RateLimiter, type FetchLike } from '../../src/http/index.ts';
import { connectorRegistry } from '../../src/manifest/index.ts';
import { addObserver, observing, type UpstreamCallEnd, type UpstreamCallInfo } from '../../src/observe/hooks.ts';

const granola = connectorRegistry().get('granola')!;
const KEY = 'grn_secret_key_for_observation_test';
const NOTE = 'not_Observed000000';

/** Answers each request with the next of `statuses` (a small note body), recording nothing. */
function upstream(statuses: number[]): FetchLike {
  let i = 0;
  return async () => {
    const status = statuses[Math.min(i++, statuses.length - 1)]!;
    const body =
      status === 200
        ? JSON.stringify({
            id: NOTE,
            title: 'observed',
            owner: { name: 'a', email: 'a@example.com' },
            created_at: '2024-01-01T00:00:00Z',
            updated_at: '2024-01-01T00:00:00Z',
          })
        : '{"message":"unavailable"}';
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  };
}

const removers: (() => void)[] = [];
afterEach(() => {
  for (const r of removers.splice(0)) r();
});

function observe(): { calls: { info: UpstreamCallInfo; end?: UpstreamCallEnd }[] } {
  const calls: { info: UpstreamCallInfo; end?: UpstreamCallEnd }[] = [];
  removers.push(
    addObserver({
      upstream: (info) => {
        const c: { info: UpstreamCallInfo; end?: UpstreamCallEnd } = { info };
        calls.push(c);
        return { end: (r) => void (c.end = r) };
      },
    }),
  );
  return { calls };
}

it('with no observer, nothing is observing', () => {
  expect(observing).toBe(false);
});

it("a call retried after a 503 is one observation: one retry, its waits, both answers' bytes, the last status; no id or key in it", async () => {
  const { calls } = observe();
  // The bucket holds one token: the retry waits for the next one (50 ms).
  const rt = new ConnectorRuntime(
    granola,
    { api_key: KEY },
    { baseUrl: 'https://api.example.test', fetch: upstream([503, 200]), limiter: new RateLimiter(1, 50, 1), retry: { baseDelayMs: 1, maxDelayMs: 2 } },
  );
  const out = await rt.execute('notes', 'get', { note_id: NOTE });
  expect(out.data).toMatchObject({ id: NOTE });
  expect(calls).toHaveLength(1);
  const [c] = calls;
  expect(c!.info).toEqual({
    connectorType: 'granola',
    entity: 'notes',
    action: 'get',
    method: 'GET',
    host: 'api.example.test',
    route: '/v1/notes/{{params.note_id}}',
  });
  expect(c!.end).toMatchObject({ status: 200, errorCode: undefined, attempts: 2, retries: 1 });
  expect(c!.end!.waitedMs).toBeGreaterThan(0);
  expect(c!.end!.bytes).toBeGreaterThan('{"message":"unavailable"}'.length);
  expect(JSON.stringify(calls)).not.toContain(KEY);
  expect(JSON.stringify(calls)).not.toContain(NOTE);
});

it('a call that got no answer is reported by its error code', async () => {
  const { calls } = observe();
  const refused: FetchLike = async () => {
    throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  };
  const rt = new ConnectorRuntime(granola, { api_key: KEY }, { baseUrl: 'https://api.example.test', fetch: refused, limiter: null, retry: { maxAttempts: 1 } });
  await expect(rt.execute('notes', 'get', { note_id: NOTE })).rejects.toMatchObject({ code: 'upstream_unavailable' });
  expect(calls[0]!.end).toMatchObject({ status: undefined, errorCode: 'upstream_unavailable', attempts: 1, retries: 0, bytes: 0 });
});

it('the metrics count them by connector type, entity.action and outcome', async () => {
  const { serviceMetrics, METRIC_FAMILIES } = await import('../../src/service/ops/metrics.ts');
  const m = serviceMetrics();
  const rt = new ConnectorRuntime(
    granola,
    { api_key: KEY },
    { baseUrl: 'https://api.example.test', fetch: upstream([503, 200]), limiter: new RateLimiter(1, 50, 1), retry: { baseDelayMs: 1, maxDelayMs: 2 } },
  );
  await rt.execute('notes', 'get', { note_id: NOTE });
  const text = await m.registry.metrics();
  expect(text).toContain(`${METRIC_FAMILIES.upstreamCalls}{connector_type="granola",action="notes.get",outcome="2xx"} 1`);
  expect(text).toContain(`${METRIC_FAMILIES.upstreamRetries}{connector_type="granola",action="notes.get"} 1`);
  expect(text).toMatch(new RegExp(`${METRIC_FAMILIES.upstreamWait}\\{connector_type="granola"\\} 0\\.\\d+`));
  expect(text).not.toContain(NOTE);
});
