/**
 * Simulator hooks: a built-in connector whose simulator needs code of its own (a seeded workspace,
 * state machines a sidecar cannot declare) keeps it in its own folder, and says how the sandbox
 * starts it in `connectors/<type>/simulator/sandbox.ts` (compiled beside the package's dist/src as
 * dist/connectors/<type>/simulator/sandbox.js). The sandbox finds these modules by that convention;
 * every other connector runs on the generic simulator of its vendor description's format.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Simulator } from './sim-server.ts';

/** What a simulator module's start function takes (each accepts at least these). */
export interface SimulatorStartOptions {
  port?: number | undefined;
  host?: string | undefined;
}

/** A started simulator, with whatever credential properties it exposes (apiKey, accessToken...). */
export type AnySimulator = Simulator & Record<string, unknown>;

export interface SandboxSimulatorEntry {
  /** Connector type, as in connectors/<type>/connector.yaml. */
  type: string;
  /** Start the simulator; resolves to undefined when its module is not present. */
  start: (options: SimulatorStartOptions) => Promise<AnySimulator | undefined>;
  /** Working credentials for the connector type, in the manifest's credential field names. */
  credentials: (sim: AnySimulator) => Record<string, string>;
}

/** What a connector's `simulator/sandbox.ts` exports as `sandbox`. */
export interface SandboxHook {
  start: (options: SimulatorStartOptions) => Promise<Simulator>;
  credentials: (sim: AnySimulator) => Record<string, string>;
}

/** Read a string property a simulator must expose; a clear error beats `undefined` credentials. */
export function prop(sim: AnySimulator, name: string): string {
  const v = sim[name];
  if (typeof v !== 'string' || v === '') throw new Error(`simulator at ${sim.url} exposes no ${name}`);
  return v;
}

/**
 * Where hook modules live: the package's connectors/ from src/simulator/ (running the sources),
 * dist/connectors/ from dist/src/simulator/ (the build); the same relative path either way.
 */
const HOOKS_DIR = fileURLToPath(new URL('../../connectors/', import.meta.url));
const HOOK_EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/** The hook module of a connector type, or undefined when its folder has none. */
export function hookModule(type: string, dir: string = HOOKS_DIR): string | undefined {
  const file = join(dir, type, 'simulator', `sandbox${HOOK_EXT}`);
  return existsSync(file) ? file : undefined;
}

/** One sandbox entry per connector with a hook module, by type; each module is loaded on first use. */
export function codedSimulators(dir: string = HOOKS_DIR): SandboxSimulatorEntry[] {
  const types = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  return types.flatMap((type) => {
    const file = hookModule(type, dir);
    return file === undefined ? [] : [hookEntry(type, file)];
  });
}

function hookEntry(type: string, file: string): SandboxSimulatorEntry {
  let hook: SandboxHook | undefined;
  return {
    type,
    start: async (options) => {
      hook ??= ((await import(pathToFileURL(file).href)) as { sandbox: SandboxHook }).sandbox;
      return (await hook.start(options)) as AnySimulator;
    },
    credentials: (sim) => {
      // Credentials are asked of a started simulator, so its module is loaded by then.
      if (hook === undefined) throw new Error(`the ${type} simulator was not started through its hook module (${file})`);
      return hook.credentials(sim);
    },
  };
}
