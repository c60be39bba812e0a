/**
 * The shared upstream throttle (SharedThrottle in src/service/limits/shared-limits.ts) queues its
 * callers per key in the instance: one request at a time asks the store for the points of the
 * callers waiting, and a window the store reported spent is waited out without asking again (issue 25's fleet bench: 100 syncs'
 * hydrations asked the limits pool twice as often as they were granted, in bursts at each
 * window's end, and a request's own check queued behind them).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { SharedThrottle } from '../../src/service/limits/shared-limits.ts';
import { ThrottleRefused } from '../../src/http/index.ts';

/** A fixed-window counter like RateLimiterPostgres's (the window starts at its first point), answering after a turn. */
function fakeStore(points: number, windowMs: number) {
  let used = 0;
  let expire = 0;
  const s = { asked: 0, inFlight: 0, maxInFlight: 0, refused: 0 };
  const limiter = {
    points,
    async consume(_key: string, n = 1): Promise<RateLimiterRes> {
      s.asked += 1;
      s.inFlight += 1;
      s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
      await Promise.resolve();
      await Promise.resolve();
      s.inFlight -= 1;
      const now = Date.now();
      if (expire <= now) {
        used = 0;
        expire = now + windowMs;
      }
      used += n;
      const res = new RateLimiterRes(Math.max(0, points - used), expire - now, used, used === n);
      if (used > points) {
        s.refused += 1;
        throw res;
      }
      return res;
    },
    async block(): Promise<void> {},
  };
  return { limiter: limiter as unknown as RateLimiterAbstract, s };
}

describe('SharedThrottle', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks the store one request at a time, for every caller waiting up to the window, and waits out a spent window without asking', async () => {
    const { limiter, s } = fakeStore(3, 1000);
    const throttle = new SharedThrottle(limiter, 'k', 100, () => 0);
    const order: number[] = [];
    const all = Array.from({ length: 10 }, (_, i) => throttle.acquire().then(() => order.push(i)));
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual([0, 1, 2]);
    await vi.advanceTimersByTimeAsync(500);
    expect(order).toEqual([0, 1, 2]);
    await vi.advanceTimersByTimeAsync(600);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    await vi.advanceTimersByTimeAsync(3000);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(s.maxInFlight).toBe(1);
    expect(s.refused).toBe(0);
    // The first caller asks alone (nobody else waits yet), then 2 (what the window has left), then
    // a request per window: 3 + 3 + 1 callers.
    expect(s.asked).toBe(5);
    expect(throttle.asked).toBe(5);
    expect(throttle.queued).toBe(0);
  });

  it('refuses a caller who cannot wait for the spent window, without asking the store', async () => {
    const { limiter, s } = fakeStore(1, 1000);
    const throttle = new SharedThrottle(limiter, 'k', 100, () => 0);
    await throttle.acquire();
    const asked = s.asked;
    await expect(throttle.acquire({ maxWaitMs: 200 })).rejects.toMatchObject({ reason: 'deadline' });
    expect(s.asked).toBe(asked);
    // A queued caller whose limit the wait would pass is refused when the window turns out spent.
    const { limiter: l2 } = fakeStore(1, 1000);
    const t2 = new SharedThrottle(l2, 'k', 100, () => 0);
    const first = t2.acquire();
    const second = expect(t2.acquire({ maxWaitMs: 300 })).rejects.toBeInstanceOf(ThrottleRefused);
    await vi.advanceTimersByTimeAsync(0);
    await first;
    await second;
  });

  it('refuses queue_full when the window is spent and the queue holds maxQueue callers', async () => {
    const { limiter } = fakeStore(1, 1000);
    const throttle = new SharedThrottle(limiter, 'k', 2, () => 0);
    await throttle.acquire();
    const waiting = [throttle.acquire(), throttle.acquire()];
    await expect(throttle.acquire()).rejects.toMatchObject({ reason: 'queue_full' });
    await vi.advanceTimersByTimeAsync(2100);
    await Promise.all(waiting);
  });

  it('an aborted caller leaves the queue and the next is served', async () => {
    const { limiter, s } = fakeStore(1, 1000);
    const throttle = new SharedThrottle(limiter, 'k', 100, () => 0);
    await throttle.acquire();
    const c = new AbortController();
    const gone = throttle.acquire({ signal: c.signal });
    const next = throttle.acquire();
    c.abort(new Error('caller left'));
    await expect(gone).rejects.toThrow('caller left');
    expect(throttle.queued).toBe(1);
    await vi.advanceTimersByTimeAsync(1100);
    await next;
    expect(s.asked).toBe(2);
  });

  it('the callers of a spent window wake up within spreadMs after its end', async () => {
    const { limiter } = fakeStore(1, 1000);
    const throttle = new SharedThrottle(limiter, 'k', 100, () => 0.5, 100);
    await throttle.acquire();
    let done = false;
    const next = throttle.acquire().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(1040);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(20);
    await next;
  });

  it('pauseFor holds every caller back without asking the store', async () => {
    const { limiter, s } = fakeStore(5, 1000);
    const throttle = new SharedThrottle(limiter, 'k', 100, () => 0);
    throttle.pauseFor(3000);
    let done = false;
    const p = throttle.acquire().then(() => (done = true));
    await expect(throttle.acquire({ maxWaitMs: 1000 })).rejects.toMatchObject({ reason: 'paused' });
    await vi.advanceTimersByTimeAsync(2900);
    expect(done).toBe(false);
    expect(s.asked).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    await p;
    expect(s.asked).toBe(1);
  });
});

describe('SharedThrottle with another instance on the key', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 2_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a refused request grants nobody until the window ends, then the callers waiting are granted in one request', async () => {
    const { limiter, s } = fakeStore(5, 1000);
    const here = new SharedThrottle(limiter, 'k', 100, () => 0);
    const there = new SharedThrottle(limiter, 'k', 100, () => 0);
    await here.acquire(); // here learns the window has 4 left
    for (let i = 0; i < 4; i++) await there.acquire(); // none left, which here does not know
    const order: number[] = [];
    const all = Array.from({ length: 4 }, (_, i) => here.acquire().then(() => order.push(i)));
    await vi.advanceTimersByTimeAsync(0);
    expect(order).toEqual([]);
    expect(s.refused).toBe(1);
    const asked = s.asked;
    await vi.advanceTimersByTimeAsync(1100);
    await Promise.all(all);
    expect(order).toEqual([0, 1, 2, 3]);
    expect(s.asked).toBe(asked + 1);
  });
});
