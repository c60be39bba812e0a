/**
 * The sandbox: every upstream simulator started at once, each with working sample credentials,
 * so `switchboard sandbox` (and tests) can point connectors at local fakes.
 *
 * Simulators are listed in SIMULATORS (a connector's hook module, else the generic simulator of its
 * vendor description) and loaded on first use. With a state file
 * (`stateFile`), the sandbox remembers across restarts what a fresh simulator would forget: the
 * OAuth tokens it issued, so connectors created through the simulated OAuth keep working; and it
 * records where it listens, so `switchboard exec` and `switchboard sync` find it (sandbox-state.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseYaml as parseManifestYaml } from '../manifest/yaml-source.ts';
import { CONNECTORS_DIR } from '../manifest/connectors-dir.ts';
import { codedSimulators, type AnySimulator, type SandboxSimulatorEntry } from './sandbox-hooks.ts';
import { readSandboxState, writeSandboxState, type SandboxKind } from './sandbox-state.ts';

export type { SimulatorStartOptions, AnySimulator, SandboxSimulatorEntry } from './sandbox-hooks.ts';

/** Simulators with code of their own (connectors/<type>/simulator/sandbox.ts, found by convention). */
const CODED: readonly SandboxSimulatorEntry[] = codedSimulators();

/**
 * Every other built-in connector whose folder holds an OpenAPI or GraphQL vendor description and
 * a simulator sidecar (simulator.yaml) runs on the generic simulator of that format, with the sample credentials
 * the sidecar's `sandbox.credentials` names. No code per connector: adding the two files is enough.
 */
export function describedSimulators(dir: string, coded: ReadonlySet<string> = new Set()): SandboxSimulatorEntry[] {
  const entries: SandboxSimulatorEntry[] = [];
  const types = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  for (const type of types) {
    if (coded.has(type)) continue;
    const manifestFile = join(dir, type, 'connector.yaml');
    const sidecarFile = join(dir, type, 'simulator.yaml');
    if (!existsSync(manifestFile) || !existsSync(sidecarFile)) continue;
    const vd = (manifestValue(readFileSync(manifestFile, 'utf8')) as { vendor_description?: { path?: unknown; format?: unknown } } | null)?.vendor_description;
    if ((vd?.format !== 'openapi' && vd?.format !== 'graphql') || typeof vd.path !== 'string') continue;
    const descriptionFile = join(dir, type, vd.path);
    const format = vd.format;
    entries.push({
      type,
      start: async (options) => {
        const { loadSidecar } = await import('./sidecar.ts');
        const sidecar = loadSidecar(sidecarFile);
        const sim =
          format === 'graphql'
            ? await (
                await import('./graphql-simulator.ts')
              ).startGraphqlSimulator({ schema: readFileSync(descriptionFile, 'utf8'), sidecar, port: options.port, host: options.host })
            : await (
                await import('./openapi-simulator.ts')
              ).startOpenApiSimulator({ description: descriptionFile, sidecar, port: options.port, host: options.host });
        return Object.assign(sim, { sandboxCredentials: sidecar.sandbox?.credentials ?? {} }) as unknown as AnySimulator;
      },
      credentials: (sim) => {
        const c = sim['sandboxCredentials'] as Record<string, string> | undefined;
        if (c === undefined || Object.keys(c).length === 0) throw new Error(`${sidecarFile} names no sandbox.credentials for the ${type} simulator`);
        return { ...c };
      },
    });
  }
  return entries;
}

/** A manifest's value, parsed fast (js-yaml, as the manifest loader does); text it refuses throws `yaml`'s error as before. */
function manifestValue(text: string): unknown {
  const parsed = parseManifestYaml(text);
  return 'source' in parsed ? parsed.source.value : parseYaml(text);
}

/** Every simulator the sandbox knows; the array index fixes each one's port under basePort. */
export const SIMULATORS: readonly SandboxSimulatorEntry[] = [...CODED, ...describedSimulators(CONNECTORS_DIR, new Set(CODED.map((e) => e.type)))];

export interface SandboxConnector {
  base_url: string;
  credentials: Record<string, string>;
}

export interface Sandbox {
  /** Per connector type: where its simulator listens and credentials it accepts. */
  connectors: Record<string, SandboxConnector>;
  /** The running simulators, for fault injection and request logs. */
  simulators: Record<string, AnySimulator>;
  /** Registry types whose simulator module is not present in this checkout. */
  missing: string[];
  /** The printable form, so JSON.stringify(sandbox) prints it. */
  toJSON(): SandboxPrintable;
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string | undefined;
  /** Listen on basePort, basePort+1, ... in registry order (fixed per type); default any free port. */
  basePort?: number | undefined;
  /**
   * JSON file that keeps the sandbox's state across restarts (OAuth tokens the simulators issued)
   * and tells other commands where it listens (see sandbox-state.ts); default none.
   */
  stateFile?: string | undefined;
  /** Who runs it, recorded in the state file: `sandbox` (switchboard sandbox) or `service` (serve --sandbox). */
  kind?: SandboxKind | undefined;
}

export interface SandboxPrintable {
  connectors: Record<string, SandboxConnector & { env: Record<string, string> }>;
}

/** The sandbox as plain JSON: URLs, credentials and the env var that points a connector at it. */
export function printable(sandbox: Pick<Sandbox, 'connectors'>): SandboxPrintable {
  const connectors: SandboxPrintable['connectors'] = {};
  for (const [type, c] of Object.entries(sandbox.connectors)) {
    connectors[type] = { base_url: c.base_url, credentials: { ...c.credentials }, env: { [`SWITCHBOARD_${type.toUpperCase()}_BASE_URL`]: c.base_url } };
  }
  return { connectors };
}

/** The URL clients should use: wildcard listen addresses are reached over loopback. */
function baseUrl(host: string | undefined, port: number): string {
  if (host === undefined || host === '' || host === '0.0.0.0' || host === '::') return `http://127.0.0.1:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Start every simulator present; on any failure, the ones already started are closed. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const connectors: Record<string, SandboxConnector> = {};
  const simulators: Record<string, AnySimulator> = {};
  const missing: string[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(Object.values(simulators).map((s) => s.close()));
  };
  try {
    for (const [i, entry] of SIMULATORS.entries()) {
      const sim = await entry.start({
        port: options.basePort === undefined ? 0 : options.basePort + i,
        ...(options.host !== undefined ? { host: options.host } : {}),
      });
      if (!sim) {
        missing.push(entry.type);
        continue;
      }
      simulators[entry.type] = sim;
      connectors[entry.type] = { base_url: baseUrl(options.host, sim.port), credentials: entry.credentials(sim) };
    }
  } catch (e) {
    await close();
    throw e;
  }
  const sandbox: Sandbox = { connectors, simulators, missing, toJSON: () => printable(sandbox), close };
  if (options.stateFile !== undefined) rememberTokens(options.stateFile, options.kind ?? 'sandbox', sandbox);
  return sandbox;
}

/**
 * Restore the OAuth tokens a previous run issued and record every new one as it is issued.
 * Simulators with OAuth keep their accepted tokens in `tokens` (a Set); its `add` is observed on
 * this one instance so that a token is on disk before the service stores the connector using it.
 */
function rememberTokens(file: string, kind: SandboxKind, sandbox: Sandbox): void {
  const previous = readSandboxState(file);
  const tokens: Record<string, string[]> = {};
  const save = (): void => writeSandboxState(file, { kind, pid: process.pid, connectors: sandbox.connectors, tokens });
  for (const [type, sim] of Object.entries(sandbox.simulators)) {
    const set = sim['tokens'];
    if (!(set instanceof Set)) continue;
    const list = (tokens[type] = [...new Set(previous?.tokens[type] ?? [])]);
    const add = set.add.bind(set);
    for (const t of list) add(t);
    set.add = (token: unknown) => {
      add(token);
      if (typeof token === 'string' && !list.includes(token)) {
        list.push(token);
        save();
      }
      return set;
    };
  }
  save();
  // Stopping: the state file says so before the simulators go, so no command mistakes a sandbox
  // that is shutting down (or whose process lingers) for a running one. The tokens stay.
  const close = sandbox.close;
  sandbox.close = async () => {
    writeSandboxState(file, { kind, pid: 0, connectors: sandbox.connectors, tokens });
    await close();
  };
}

export { readSandboxState, findRunningSandbox, sandboxStateFile, type SandboxState, type SandboxKind } from './sandbox-state.ts';

/** The simulator plumbing, for writing a simulator of a new connector's API. */
export { startSimulator, parseJson, type SimRequest, type SimResponse, type Simulator, type Fault } from './sim-server.ts';
