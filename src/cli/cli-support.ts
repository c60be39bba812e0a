/**
 * What every subcommand shares, kept light on purpose: `switchboard --help` loads this module
 * and commander only, so heavy modules (the engine, the service, codegen) are imported inside
 * each command's action.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { SwitchboardError } from '../errors/index.ts';

/** Environment variable holding credentials JSON, so they stay out of shell history. */
export const CREDENTIALS_ENV = 'SWITCHBOARD_CREDENTIALS';

/**
 * Parse `JSON` or `@file` (a file containing JSON) given to option `option` (e.g. `--params`).
 * Malformed JSON is `errorCode` (default invalid_params) with the option named and the fix.
 */
export function jsonArg(value: string, option: string, errorCode: 'invalid_params' | 'invalid_credentials_json' = 'invalid_params', credentialsExample = '{"api_key":"..."}'): unknown {
  let text = value;
  const fromFile = value.startsWith('@');
  if (fromFile) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (e) {
      throw new SwitchboardError(errorCode, `Cannot read the ${option} file ${value.slice(1)}: ${(e as Error).message}`, { details: { option } });
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const where = fromFile ? `the file ${value.slice(1)} given to ${option}` : option;
    throw new SwitchboardError(errorCode, `${where} is not valid JSON (${(e as Error).message}). Pass a JSON object, e.g. ${jsonExample(option, errorCode, credentialsExample)}`, {
      details: { option },
    });
  }
}

/**
 * A valid example for the option or variable, as a shell line: params look like params (never
 * like a credential), and the environment variable is set with `export NAME='...'`.
 */
function jsonExample(option: string, errorCode: 'invalid_params' | 'invalid_credentials_json', credentialsExample: string): string {
  const value = errorCode === 'invalid_credentials_json' ? `'${credentialsExample}'` : `'{"page_size":2}'`;
  if (option.startsWith('$')) return `export ${option.slice(1)}=${value}`;
  return `${option} ${value}, or ${option} @file.json`;
}

/**
 * Credentials from `--credentials` or $SWITCHBOARD_CREDENTIALS, parsed; errors name where they
 * came from, with an example of the connector type's own fields (its manifest's auth).
 */
export async function credentialsArg(option: string | undefined, type: string): Promise<unknown> {
  const source = option ?? (process.env[CREDENTIALS_ENV] || undefined);
  const { credentialsExample } = await import('./credentials-example.ts');
  const { json, note } = await credentialsExample(type);
  if (source === undefined) {
    throw new SwitchboardError('invalid_credentials', `No credentials: pass --credentials '${json}' (or @file.json), or export ${CREDENTIALS_ENV}='${json}'${note}`, {
      details: { connector_type: type },
    });
  }
  return jsonArg(source, option !== undefined ? '--credentials' : `$${CREDENTIALS_ENV}`, 'invalid_credentials_json', json);
}

/** A port number from a flag, or a clear error. */
export function portArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new SwitchboardError('invalid_params', `--port must be a number from 0 to 65535, got "${value}"`);
  return n;
}

/** A listen failure turned into `port_in_use` naming the flag (and env var) that picks another port. */
export function listenError(e: unknown, port: number | undefined, fix: string): unknown {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'EADDRINUSE') {
    const p = port ?? (/:(\d+)$/.exec(err.message)?.[1] ?? '?');
    return new SwitchboardError('port_in_use', `Port ${p} is already in use by another process. Stop that process, or ${fix}`, { details: { port: Number(p) } });
  }
  return e;
}

/** `--connectors <dir>`, repeatable: extra connector directories (see applyConnectorsOption). */
export const CONNECTORS_OPTION = ['--connectors <dir>', 'a directory of <type>/connector.yaml folders (or one such folder) to use besides the built-in connectors; repeatable (default: $SWITCHBOARD_CONNECTORS_PATH)'] as const;

/** Collects a repeatable option's values. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * Before any command runs: its `--connectors` directories (a YAML file given to `mcp --connectors`
 * is left to it: its instances file) become the registry's
 * search path, else $SWITCHBOARD_CONNECTORS_PATH does. A directory that does not exist stops the
 * command with invalid_connectors_path.
 */
export async function applyConnectorsOption(values: unknown, command: string): Promise<void> {
  // mcp: a file (or a .yaml path not there yet, reported by mcp) is its instances file.
  const given = Array.isArray(values) ? values.filter((v): v is string => typeof v === 'string') : typeof values === 'string' ? [values] : [];
  const dirs = given.filter((v) => !(command === 'mcp' && isInstancesFile(v)));
  const { setConnectorsPath, connectorsPath } = await import('../manifest/registry.ts');
  setConnectorsPath(dirs.length > 0 ? dirs : undefined);
  connectorsPath();
}

/** `mcp --connectors <value>`: a file (or a .yaml path that is not there, for mcp to report) is the instances file; a directory is not. */
export function isInstancesFile(v: string): boolean {
  return existsSync(v) ? !statSync(v).isDirectory() : /\.ya?ml$/i.test(v);
}

/** Print an error as JSON on stderr and set a failing exit code. */
export function failWith(e: unknown): void {
  const err = e instanceof SwitchboardError ? e : new SwitchboardError('internal_error', (e as Error)?.message ?? String(e));
  process.stderr.write(JSON.stringify({ error: err.toJSON() }, null, 2) + '\n');
  process.exitCode = 1;
}

/** "1 entity", "2 entities". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

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
  const issued = (s: import('../simulator/sandbox-state.ts').SandboxState): boolean => s.connectors[type] !== undefined && sameJson(s.connectors[type]?.credentials, credentials);
  const running = runningSandboxes(dir, issued);
  if (running.length > 1) throw sandboxAmbiguous(type, dir, running, other);
  const found = running[0];
  const url = found?.state.connectors[type]?.base_url;
  if (found !== undefined && url !== undefined) {
    process.stderr.write(`Using the sandbox's ${type} simulator at ${url} (${found.file}, started by ${sandboxLabel(found.state)}); ${other} to choose another.\n`);
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
  opts: { baseUrl?: string | undefined; region?: string | undefined; validate?: (runtime: import('../engine/index.ts').ConnectorRuntime) => void; other?: string },
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
