/**
 * docs/proxy.md's table of what each connector's proxy reaches and forwards, made from the
 * manifests: base URL (and regions), extra hosts, forwarded headers, idempotency key.
 * scripts/docs-tables.ts writes it between <!-- proxy:start --> and <!-- proxy:end -->;
 * test/proxy/docs.test.ts fails when it is stale.
 */
import { proxyHeaderAllowList } from '../src/engine/proxy-request.ts';
import { connectorRegistry } from '../src/manifest/index.ts';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
const code = (xs: string[]): string => (xs.length === 0 ? '—' : xs.map((x) => `\`${cell(x)}\``).join(', '));

export function proxyTable(): string {
  const defaults = new Set(proxyHeaderAllowList({ manifest: {} } as never));
  const rows = [...connectorRegistry().values()]
    .sort((a, b) => a.type.localeCompare(b.type))
    .map((m) => {
      const p = m.manifest.proxy;
      const base = [m.manifest.base_url.default, ...Object.entries(m.manifest.base_url.regions ?? {}).map(([r, u]) => `${u} (${r})`)];
      const extra = [...proxyHeaderAllowList(m)].filter((h) => !defaults.has(h));
      const on = p?.enabled === false ? 'off' : 'on';
      return `| \`${m.type}\` | ${on} | ${code(base)} | ${code(p?.hosts ?? [])} | ${code(extra)} | ${p?.idempotency_header !== undefined ? `\`${p.idempotency_header}\`` : '—'} |`;
    });
  return [
    `Every connector forwards ${[...defaults].map((h) => `\`${h}\``).join(', ')}; the table lists the headers its manifest adds.`,
    '',
    '| type | proxy | base URL | extra hosts | extra forwarded headers | idempotency key (POST/PATCH retried) |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
