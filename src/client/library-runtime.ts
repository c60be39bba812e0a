/**
 * Library mode's runtime for `exec`, `check`, `proxy` and the local MCP backend: the base URL
 * from a flag, a running sandbox holding the same sample credentials, or the manifest. Kept light
 * (the CLI's `--help` loads it): the engine, the manifests and the sandbox's state are imported
 * when a runtime is built.
 */
import { dirname, resolve } from 'node:path';
import { SwitchboardError } from '../errors/index.ts';

/** Environment variable naming the data directory (`--data-dir` sets it for the command it precedes or follows). */
export const DATA_DIR_ENV = 'SWITCHBOARD_DATA_DIR';

/**
 * The data directory, absolute: $SWITCHBOARD_DATA_DIR (or --data-dir), else beside the SQLite
 * database (`SWITCHBOARD_DATABASE_URL` as a path or `sqlite:<path>`), else ./data. The SQLite
 * database and the sandbox's state files live here.
 */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env[DATA_DIR_ENV]?.trim();
  if (dir) return resolve(dir);
  const url = env['SWITCHBOARD_DATABASE_URL']?.trim();
  if (url !== undefined && url !== '' && !/^postgres(ql)?:/i.test(url) && url !== ':memory:') return dirname(resolve(url.replace(/^sqlite:/, '')));
  return resolve('data');
}

/** Same JSON value (key order ignored): sandbox credentials compared with the ones given. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * The base URL: --base-url, else a running sandbox's simulator for this type when the credentials
 * are that sandbox's sample credentials (a real key never goes to a simulator, and sample keys
 * never go to the real API: when the sandbox they come from is stopped, sandbox_not_running),
 * else the manifest's. Several running sandboxes with those credentials (each its own data) are
 * never chosen between: sandbox_ambiguous names each one's URL. `other` says how to choose another base URL (the flag, or the mcp file's base_url).
 */
export async function baseUrlFor(type: string, credentials: unknown, flag: string | undefined, other = 'pass --base-url'): Promise<string | undefined> {
  if (flag !== undefined) return flag;
  const { runningSandboxes, sandboxStates } = await import('../simulator/sandbox-state.ts');
  const { sandboxAmbiguous, sandboxLabel } = await import('./sandbox-choice.ts');
  const dir = dataDir();
  const issued = (s: import('../simulator/sandbox-state.ts').SandboxState): boolean =>
    s.connectors[type] !== undefined && sameJson(s.connectors[type]?.credentials, credentials);
  const running = runningSandboxes(dir, issued);
  if (running.length > 1) throw sandboxAmbiguous(type, dir, running, other);
  const found = running[0];
  const url = found?.state.connectors[type]?.base_url;
  if (found !== undefined && url !== undefined) {
    process.stderr.write(
      `Using the sandbox's ${type} simulator at ${url} (${found.file}, started by ${sandboxLabel(found.state)}); ${other} to choose another.\n`,
    );
    return url;
  }
  const stopped = sandboxStates(dir).find((x) => issued(x.state));
  if (stopped !== undefined) {
    throw new SwitchboardError(
      'sandbox_not_running',
      `These are the sandbox's sample ${type} credentials, but the sandbox is not running (${stopped.file}), and the real ${type} API would refuse them. ` +
        `Start it with \`switchboard sandbox\` (data directory ${dir}), or ${other} to send them elsewhere.`,
      { details: { connector_type: type, data_dir: dir, state_file: stopped.file } },
    );
  }
  return undefined;
}

/**
 * A library-mode runtime for `exec`, `check` and `mcp`: the connector type's manifest (only that
 * one is compiled), the credentials, and the base URL from --base-url, a running sandbox, or the
 * manifest. `validate` checks the input (entity, action, params) before the sandbox is looked
 * up, so that an input error is never preceded by a sandbox notice.
 */
export async function libraryRuntime(
  type: string,
  credentials: unknown,
  opts: {
    baseUrl?: string | undefined;
    region?: string | undefined;
    validate?: (runtime: import('../engine/index.ts').ConnectorRuntime) => void;
    other?: string;
  },
): Promise<import('../engine/index.ts').ConnectorRuntime> {
  const { ConnectorRuntime } = await import('../engine/index.ts');
  const { getConnector } = await import('../manifest/index.ts');
  const manifest = getConnector(type);
  const region = opts.region !== undefined ? { region: opts.region } : {};
  const checked = new ConnectorRuntime(manifest, credentials, { ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}), ...region });
  opts.validate?.(checked);
  if (opts.baseUrl !== undefined) return checked;
  const baseUrl = await baseUrlFor(type, credentials, undefined, opts.other);
  return baseUrl === undefined ? checked : new ConnectorRuntime(manifest, credentials, { baseUrl, ...region });
}
