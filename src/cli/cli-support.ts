/**
 * What every subcommand shares, kept light on purpose: `switchboard --help` loads this module
 * and commander only, so heavy modules (the engine, the service, codegen) are imported inside
 * each command's action.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { SwitchboardError } from '../errors/index.ts';

/** Environment variable holding credentials JSON, so they stay out of shell history. */
export const CREDENTIALS_ENV = 'SWITCHBOARD_CREDENTIALS';

/**
 * Parse `JSON` or `@file` (a file containing JSON) given to option `option` (e.g. `--params`).
 * Malformed JSON is `errorCode` (default invalid_params) with the option named and the fix.
 */
export function jsonArg(
  value: string,
  option: string,
  errorCode: 'invalid_params' | 'invalid_credentials_json' = 'invalid_params',
  credentialsExample = '{"api_key":"..."}',
): unknown {
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
    throw new SwitchboardError(
      errorCode,
      `${where} is not valid JSON (${(e as Error).message}). Pass a JSON object, e.g. ${jsonExample(option, errorCode, credentialsExample)}`,
      {
        details: { option },
      },
    );
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
    throw new SwitchboardError(
      'invalid_credentials',
      `No credentials: pass --credentials '${json}' (or @file.json), or export ${CREDENTIALS_ENV}='${json}'${note}`,
      {
        details: { connector_type: type },
      },
    );
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
    const p = port ?? /:(\d+)$/.exec(err.message)?.[1] ?? '?';
    return new SwitchboardError('port_in_use', `Port ${p} is already in use by another process. Stop that process, or ${fix}`, {
      details: { port: Number(p) },
    });
  }
  return e;
}

/** `--connectors <dir>`, repeatable: extra connector directories (see applyConnectorsOption). */
export const CONNECTORS_OPTION = [
  '--connectors <dir>',
  'a directory of <type>/connector.yaml folders (or one such folder) to use besides the built-in connectors; repeatable (default: $SWITCHBOARD_CONNECTORS_PATH)',
] as const;

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

// Library mode's base URL and runtime live below the CLI (the local MCP backend uses them too).
export { DATA_DIR_ENV, dataDir, baseUrlFor, libraryRuntime } from '../client/library-runtime.ts';
