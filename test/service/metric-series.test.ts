/**
 * The hot-path counters and histograms (src/service/ops/metric-series.ts) print, series for
 * series, what prom-client's own Counter and Histogram print for the same observations, and
 * their JSON is the Registry's too.
 */
import { describe, expect, it } from 'vitest';
import { Counter, Histogram, Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from '../../src/service/ops/metric-series.ts';

const BUCKETS = [0.005, 0.01, 0.1, 1, 10];
const OBSERVED = [0, 0.005, 0.0051, 0.02, 0.5, 1, 3, 10, 11, 250, Number.NaN];

function both() {
  const theirs = new Registry();
  const ours = new Registry();
  const labelNames = ['method', 'route'] as const;
  return {
    theirs,
    ours,
    h: [
      new Histogram({ name: 'h_seconds', help: 'A "histogram"\\n', labelNames, buckets: BUCKETS, registers: [theirs] }),
      new SeriesHistogram({ name: 'h_seconds', help: 'A "histogram"\\n', labelNames, buckets: BUCKETS, registers: [ours] }),
    ] as const,
    c: [
      new Counter({ name: 'c_total', help: 'A counter', labelNames: ['outcome'], registers: [theirs] }),
      new SeriesCounter({ name: 'c_total', help: 'A counter', labelNames: ['outcome'], registers: [ours] }),
    ] as const,
    bare: [
      new Histogram({ name: 'lag_seconds', help: 'No labels', buckets: BUCKETS, registers: [theirs] }),
      new SeriesHistogram({ name: 'lag_seconds', help: 'No labels', buckets: BUCKETS, registers: [ours] }),
    ] as const,
    plain: [
      new Counter({ name: 'plain_total', help: 'No labels', registers: [theirs] }),
      new SeriesCounter({ name: 'plain_total', help: 'No labels', registers: [ours] }),
    ] as const,
  };
}

describe('series metrics', () => {
  it('print what prom-client prints (labels escaped, buckets cumulative, +Inf, sum and count; unlabelled series from 0)', async () => {
    const m = both();
    expect(await m.ours.metrics()).toBe(await m.theirs.metrics());
    const [theirH, ourH] = m.h;
    const bound = ourH.labels({ method: 'GET', route: '/a/:id' });
    for (const v of OBSERVED) {
      // prom-client throws on NaN; ours drops it (an observer never throws into what it observes).
      bound.observe(v);
      ourH.observe({ method: 'POST', route: 'say "hi"\\\n' }, v / 2);
      if (Number.isNaN(v)) continue;
      theirH.observe({ method: 'GET', route: '/a/:id' }, v);
      theirH.observe({ method: 'POST', route: 'say "hi"\\\n' }, v / 2);
    }
    const [theirC, ourC] = m.c;
    theirC.inc({ outcome: '2xx' });
    ourC.labels({ outcome: '2xx' }).inc();
    theirC.inc({ outcome: '5xx' }, 2.5);
    ourC.inc({ outcome: '5xx' }, 2.5);
    m.bare[0].observe(0.2);
    m.bare[1].observe(0.2);
    m.plain[0].inc(3);
    m.plain[1].inc(3);
    expect(await m.ours.metrics()).toBe(await m.theirs.metrics());
    // The JSON too, but for prom-client's exemplar slots (always empty here).
    const withoutExemplars = (json: unknown): unknown => JSON.parse(JSON.stringify(json, (k, v: unknown) => (k === 'exemplar' ? undefined : v)));
    expect(await m.ours.getMetricsAsJSON()).toEqual(withoutExemplars(await m.theirs.getMetricsAsJSON()));
  });

  it('a bound series is one object per label set; reset forgets them all', async () => {
    const r = new Registry();
    const c = new SeriesCounter({ name: 'x_total', help: 'x', labelNames: ['a', 'b'], registers: [r] });
    expect(c.labels({ a: 'one', b: 2 })).toBe(c.labels({ b: 2, a: 'one' }));
    // Values that would join to the same text stay apart.
    expect(c.labels({ a: 'x y', b: 'z' })).not.toBe(c.labels({ a: 'x', b: 'y z' }));
    c.labels({ a: 'one', b: 2 }).inc(-1);
    c.labels({ a: 'one', b: 2 }).inc();
    expect(await r.metrics()).toContain('x_total{a="one",b="2"} 1\n');
    r.resetMetrics();
    expect(await r.metrics()).not.toContain('x_total{');
  });
});
