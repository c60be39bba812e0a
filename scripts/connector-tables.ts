/**
 * The README's connector tables, made from the manifests and the sandbox so they cannot drift:
 * `connectors` (what each connector offers) and `sandbox` (the simulators `switchboard sandbox`
 * starts, their ports and sample credentials). scripts/docs-tables.ts writes them between their
 * markers; test/docs/connector-tables.test.ts fails when they are stale.
 */
import { connectorRegistry, SYNC_ONLY_ACTIONS } from '../src/manifest/index.ts';
import { SIMULATORS, startSandbox } from '../src/simulator/sandbox.ts';

/** Port `switchboard sandbox` starts at; each simulator listens at its registry index above it. */
export const SANDBOX_BASE_PORT = 4010;

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();

export function connectorTable(): string {
  const rows = [...connectorRegistry().values()]
    .sort((a, b) => a.type.localeCompare(b.type))
    .map((m) => {
      const def = m.manifest as { title: string; kind: string; vendor_description?: { source?: string; licence?: string } };
      const auth = m.auth.map((a) => `${a.def.name} (${a.def.type})`).join(', ');
      const entities = [...m.entities.values()]
        .map((e) => {
          const actions: string[] = [...e.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a));
          if (e.def.search) actions.push('search');
          return `${e.name} (${actions.join(', ')}${e.def.sync ? '; sync' : ''})`;
        })
        .join(', ');
      const vd = def.vendor_description;
      const description = vd ? `${vd.source ?? 'vendored'}${vd.licence ? `; ${vd.licence}` : ''}` : 'none published';
      return `| \`${m.type}\` | ${cell(def.title)} | ${cell(def.kind)} | ${cell(auth)} | ${cell(entities)} | ${cell(description)} |`;
    });
  return ['| type | title | kind | auth variants | entities (actions; sync) | vendor description |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** Started on free ports: the credentials are the same on every start, the ports are the registry's. */
export async function sandboxTable(): Promise<string> {
  const sandbox = await startSandbox();
  try {
    const rows = SIMULATORS.flatMap((entry, i) => {
      const c = sandbox.connectors[entry.type];
      if (c === undefined) return [];
      return [`| \`${entry.type}\` | \`http://127.0.0.1:${SANDBOX_BASE_PORT + i}\` | \`${JSON.stringify(c.credentials)}\` |`];
    });
    return ['| connector | base URL | sample credentials |', '|---|---|---|', ...rows].join('\n');
  } finally {
    await sandbox.close();
  }
}
