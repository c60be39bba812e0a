/**
 * docs/operations.md and the files beside it: the Grafana dashboard is JSON Grafana can import
 * (panels with ids, positions and Prometheus targets, its data source variable defined), the
 * alert rules are a valid rules file, and every metric either queries is one the service
 * exports; the page lists every metric family.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { METRIC_FAMILIES, serviceMetrics } from '../../src/service/ops/metrics.ts';

const doc = (p: string): string => readFileSync(fileURLToPath(new URL(`../../docs/${p}`, import.meta.url)), 'utf8');

/** Every sample name the service exports (histograms as _bucket, _sum and _count). */
async function exportedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await serviceMetrics().registry.getMetricsAsJSON()) {
    names.add(m.name);
    if (String(m.type) === 'histogram' || String(m.type) === 'summary') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
  }
  return names;
}

/** The metric names a PromQL expression refers to. */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b((?:switchboard|nodejs|process)_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
}

describe('docs/operations', () => {
  it('the Grafana dashboard imports: panels with ids, positions and targets on the datasource variable, querying exported metrics only', async () => {
    const names = await exportedNames();
    const d = JSON.parse(doc('operations/grafana-dashboard.json')) as {
      title: string;
      uid: string;
      schemaVersion: number;
      templating: { list: { name: string; type: string }[] };
      panels: {
        id: number;
        type: string;
        title: string;
        gridPos: { x: number; y: number; w: number; h: number };
        datasource: { uid: string };
        targets: { expr: string; refId: string }[];
      }[];
    };
    expect(d.title).toBe('Switchboard');
    expect(d.schemaVersion).toBeGreaterThanOrEqual(30);
    const vars = d.templating.list.map((v) => v.name);
    expect(vars).toContain('datasource');
    expect(new Set(d.panels.map((p) => p.id)).size).toBe(d.panels.length);
    const queried = new Set<string>();
    for (const p of d.panels) {
      expect(p.gridPos.w, p.title).toBeGreaterThan(0);
      expect(p.datasource.uid).toBe('${datasource}');
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) {
        const used = metricsIn(t.expr);
        expect(used.length, t.expr).toBeGreaterThan(0);
        for (const n of used) {
          expect(names.has(n), `${p.title}: ${n}`).toBe(true);
          queried.add(n.replace(/_(bucket|sum|count)$/, ''));
        }
        for (const v of t.expr.matchAll(/\$([a-z_]+)/g)) if (!v[1]!.startsWith('_')) expect(vars, t.expr).toContain(v[1]);
      }
    }
    // Every family of Switchboard's own is on the dashboard.
    for (const family of Object.values(METRIC_FAMILIES)) expect(queried.has(family), family).toBe(true);
  });

  it('the alert rules are a Prometheus rules file querying exported metrics only', async () => {
    const names = await exportedNames();
    const rules = parse(doc('operations/prometheus-alerts.yml')) as {
      groups: { name: string; rules: { alert: string; expr: string; labels?: Record<string, string>; annotations: { summary: string } }[] }[];
    };
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThan(5);
    for (const r of all) {
      expect(r.alert).toMatch(/^[A-Za-z]+$/);
      expect(r.annotations.summary.length).toBeGreaterThan(0);
      const used = metricsIn(r.expr);
      expect(used.length, r.alert).toBeGreaterThan(0);
      for (const n of used) expect(names.has(n), `${r.alert}: ${n}`).toBe(true);
    }
  });

  it('docs/operations.md lists every metric family and keeps the sections of the audit log and revocation', () => {
    const page = doc('operations.md');
    for (const family of Object.values(METRIC_FAMILIES)) expect(page, family).toContain(`\`${family}`);
    expect(page).toContain('\n## Audit log\n');
    expect(page).toContain('\n## Revocation and permissions\n');
    expect(page).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
  });
});
