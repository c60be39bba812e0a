/**
 * The sandbox's state file, `<data dir>/sandbox-<port>.json` (mode 0600): where a running sandbox
 * listens, its sample credentials, and the OAuth tokens its simulators issued. It is how a
 * restarted sandbox keeps OAuth connectors working, and how `switchboard exec` and
 * `switchboard sync`, run beside `npm start -- --sandbox`, find the simulators.
 */
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { makeDir } from '../store/data-dir.ts';
import { dirname, join } from 'node:path';

export type SandboxKind = 'sandbox' | 'service';

export interface SandboxState {
  /** `sandbox` (switchboard sandbox) or `service` (serve --sandbox). */
  kind: SandboxKind;
  /** The process running the simulators; a state whose process is gone is not "running". */
  pid: number;
  connectors: Record<string, { base_url: string; credentials: Record<string, string> }>;
  /** OAuth tokens issued per connector type, accepted again after a restart. */
  tokens: Record<string, string[]>;
}

/** The state file of a sandbox whose first simulator listens on `basePort`, in `dataDir`. */
export function sandboxStateFile(dataDir: string, basePort: number): string {
  return join(dataDir, `sandbox-${String(basePort)}.json`);
}

/** The state in `file`, or undefined when there is none or it is unreadable (then it is rewritten). */
export function readSandboxState(file: string): SandboxState | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const s = JSON.parse(readFileSync(file, 'utf8')) as Partial<SandboxState>;
    if (typeof s.pid !== 'number' || s.connectors === undefined || typeof s.connectors !== 'object') return undefined;
    return { kind: s.kind === 'service' ? 'service' : 'sandbox', pid: s.pid, connectors: s.connectors, tokens: s.tokens ?? {} };
  } catch {
    return undefined;
  }
}

/** Write the state atomically (temp file + rename), readable by its owner only. */
export function writeSandboxState(file: string, state: SandboxState): void {
  // Not mkdirSync's recursive mode: it never returns once the working directory is gone (data-dir.ts).
  makeDir(dirname(file));
  const tmp = `${file}.${String(process.pid)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false; // 0: the sandbox was stopped
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A sandbox running now whose state is in `dataDir` and that `accept` takes (e.g. has the
 * connector type, or those credentials); a `service` one (serve --sandbox) first, then by port.
 */
export function findRunningSandbox(dataDir: string, accept: (s: SandboxState) => boolean = () => true): { file: string; state: SandboxState } | undefined {
  const found = runningSandboxes(dataDir, accept);
  return found.find((x) => x.state.kind === 'service') ?? found[0];
}

/** Every sandbox running now whose state is in `dataDir` and that `accept` takes, by port. */
export function runningSandboxes(dataDir: string, accept: (s: SandboxState) => boolean = () => true): { file: string; state: SandboxState }[] {
  return sandboxStates(dataDir).filter((x) => alive(x.state.pid) && accept(x.state));
}

/** Every readable sandbox state in `dataDir`, running or stopped, by port. */
export function sandboxStates(dataDir: string): { file: string; state: SandboxState }[] {
  if (!existsSync(dataDir)) return [];
  return readdirSync(dataDir)
    .filter((f) => /^sandbox-\d+\.json$/.test(f))
    .sort()
    .map((f) => ({ file: join(dataDir, f), state: readSandboxState(join(dataDir, f)) }))
    .filter((x): x is { file: string; state: SandboxState } => x.state !== undefined);
}
