/**
 * When several sandboxes run beside each other (`switchboard sandbox` and `serve --sandbox`, or
 * two on other ports) they issue the same sample credentials, each simulator with its own data:
 * library mode (`exec`, `check`, `mcp`) does not pick one for the caller (a record created in
 * one would "disappear" when a later command picked the other), it stops with
 * `sandbox_ambiguous`, naming each one's simulator URL to pass as the base URL.
 */
import { SwitchboardError } from '../errors/index.ts';
import type { SandboxState } from '../simulator/sandbox-state.ts';

/** The command that started a sandbox, for messages. */
export function sandboxLabel(state: SandboxState): string {
  return state.kind === 'service' ? 'serve --sandbox' : 'switchboard sandbox';
}

/** The error for several running sandboxes holding these sample credentials of `type`. */
export function sandboxAmbiguous(type: string, dataDir: string, running: { file: string; state: SandboxState }[], other: string): SwitchboardError {
  const choices = running.map((x) => ({ base_url: x.state.connectors[type]?.base_url ?? '', kind: x.state.kind, state_file: x.file }));
  const listed = running.map((x) => `${x.state.connectors[type]?.base_url ?? ''} (${sandboxLabel(x.state)}, ${x.file})`).join('; ');
  return new SwitchboardError(
    'sandbox_ambiguous',
    `${String(running.length)} sandboxes are running with these sample ${type} credentials, each with its own data: ${listed}. ` +
      `Choose one: ${other} (e.g. ${choices[0]?.base_url ?? ''}), or stop the others.`,
    { details: { connector_type: type, data_dir: dataDir, sandboxes: choices } },
  );
}
