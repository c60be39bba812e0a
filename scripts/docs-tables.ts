/**
 * Rewrites the generated tables in README.md, docs/hosted.md and docs/proxy.md (between <!-- name:start --> and
 * <!-- name:end --> markers) from their sources: the error registry and the configuration
 * variables, the connectors and the sandbox (scripts/connector-tables.ts). test/service/docs.test.ts
 * and test/docs/connector-tables.test.ts fail when they are stale. Run: npm run docs:tables
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CONFIG_VARIABLES, errorCodeTable } from '../src/service/index.ts';
import { connectorTable, sandboxTable } from './connector-tables.ts';
import { proxyTable } from './proxy-table.ts';

export function configTable(): string {
  return ['| variable | default | meaning |', '|---|---|---|', ...CONFIG_VARIABLES.map((v) => `| \`${v.name}\` | ${v.default} | ${v.description} |`)].join(
    '\n',
  );
}

const sandbox = await sandboxTable();
const TABLES: Record<string, () => string> = {
  'error-codes': errorCodeTable,
  config: configTable,
  connectors: connectorTable,
  sandbox: () => sandbox,
  proxy: proxyTable,
};

for (const file of ['README.md', 'docs/hosted.md', 'docs/proxy.md']) {
  let text = readFileSync(file, 'utf8');
  for (const [name, make] of Object.entries(TABLES)) {
    const start = `<!-- ${name}:start -->`;
    const end = `<!-- ${name}:end -->`;
    const a = text.indexOf(start);
    const b = text.indexOf(end);
    if (a < 0 || b < a) continue;
    text = `${text.slice(0, a + start.length)}\n${make()}\n${text.slice(b)}`;
  }
  writeFileSync(file, text);
}
