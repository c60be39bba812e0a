/** Servers → base_url, with config.region for an enum variable or several servers, and config values for host variables. */
import { safeName, shortText } from '../scaffold.ts';
import { isObj, type Obj } from './document.ts';
import type { Notes } from './notes.ts';

/** The manifest's base_url and config from the description's servers. */
export function scaffoldServers(doc: Obj, { guess, report }: Notes): { baseUrl: Obj; config: Obj } {
  const servers = Array.isArray(doc['servers']) ? (doc['servers'] as Obj[]) : [];
  const server = servers[0];
  const baseUrl: Obj = {};
  const config: Obj = {};
  if (server === undefined || typeof server['url'] !== 'string' || !/^https?:\/\//.test(substituteDefaults(server))) {
    baseUrl['default'] = 'https://api.example.com';
    guess(['base_url', 'default'], "the description gives no absolute server URL; put the API's base URL here");
    report.push(`base URL: ${server === undefined ? 'no servers' : `server "${String(server['url'])}" is not an absolute URL`}`);
  } else {
    const vars = isObj(server['variables']) ? (server['variables'] as Record<string, Obj>) : {};
    const enumVar = Object.entries(vars).find(([, v]) => Array.isArray(v['enum']) && (v['enum'] as unknown[]).length > 1);
    baseUrl['default'] = substituteDefaults(server).replace(/\/+$/, '');
    if (enumVar !== undefined) {
      const [varName, v] = enumVar;
      const regions: Obj = {};
      for (const value of v['enum'] as unknown[])
        regions[safeName(String(value))] = substituteDefaults(server, { [varName]: String(value) }).replace(/\/+$/, '');
      baseUrl['regions'] = regions;
      config['region'] = {
        type: 'string',
        enum: Object.keys(regions),
        default: safeName(String(v['default'] ?? (v['enum'] as unknown[])[0])),
        description: shortText(v['description']) ?? `The server variable ${varName}`,
      };
      guess(['config', 'region'], `from the server variable {${varName}}: one base URL per value`);
    }
    // Other variables (a subdomain, an instance) become config values the base URL names.
    const templated: Record<string, string> = {};
    for (const [name, v] of Object.entries(vars)) {
      if (enumVar?.[0] === name) continue;
      const key = safeName(name);
      const hostPart = new RegExp(`^https?://[^/]*\\{${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\}`).test(String(server['url']));
      if (!hostPart) {
        // In the path (an API version): its default is kept, the manifest's calls are written for it.
        guess(['base_url', 'default'], `server variable {${name}} set to its default "${String(v['default'])}"`);
        continue;
      }
      templated[name] = `{{config.${key}}}`;
      // A base URL variable must declare a pattern (docs/manifest.md, "Base URL variables"): one host label.
      config[key] = {
        type: 'string',
        pattern: '[A-Za-z0-9][A-Za-z0-9-]{0,62}',
        ...(v['default'] !== undefined && v['default'] !== '' ? { default: String(v['default']) } : {}),
        description: shortText(v['description']) ?? `The server variable ${name} of the base URL`,
      };
      guess(
        ['config', key],
        `from the server variable {${name}} of the base URL, one host label; for hosted connectors (no per-connector config) make it a non-secret credential field`,
      );
    }
    if (Object.keys(templated).length > 0) baseUrl['default'] = substituteDefaults(server, templated).replace(/\/+$/, '');
    // Several absolute servers without an enum variable: regions, named by the host label that
    // tells each from the first (api.eu.example.com → eu); the first is `default`.
    const others = servers.slice(1).filter((sv) => typeof sv['url'] === 'string' && /^https?:\/\//.test(substituteDefaults(sv)));
    if (others.length > 0 && enumVar === undefined && Object.keys(templated).length === 0) {
      const labels = (sv: Obj): string[] => new URL(substituteDefaults(sv)).hostname.split('.');
      const first = new Set(labels(server));
      const regions: Obj = { default: baseUrl['default'] };
      others.forEach((sv, i) => {
        const name = safeName(labels(sv).find((l) => !first.has(l)) ?? `server_${i + 2}`);
        regions[regions[name] === undefined ? name : `${name}_${i + 2}`] = substituteDefaults(sv).replace(/\/+$/, '');
      });
      baseUrl['regions'] = regions;
      config['region'] = { type: 'string', enum: Object.keys(regions), default: 'default', description: "Which of the API's servers to use" };
      guess(
        ['config', 'region'],
        `one region per server of the description (${servers.map((sv) => shortText(sv['description']) ?? String(sv['url'])).join('; ')})`,
      );
    }
  }
  return { baseUrl, config };
}

/** A server URL with its variables replaced by `values` or their defaults. */
function substituteDefaults(server: Obj, values: Record<string, string> = {}): string {
  const vars = isObj(server['variables']) ? (server['variables'] as Record<string, Obj>) : {};
  return String(server['url']).replace(
    /\{([^}]+)\}/g,
    (m, name: string) => values[name] ?? (vars[name]?.['default'] !== undefined ? String(vars[name]?.['default']) : m),
  );
}
