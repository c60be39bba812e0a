/** How the sandbox starts this connector's simulator and the credentials it accepts (src/simulator/sandbox-hooks.ts). */
import { prop, type SandboxHook } from '../../../src/simulator/sandbox-hooks.ts';
import { startIntercomSimulator } from './index.ts';

export const sandbox: SandboxHook = {
  start: (options) => startIntercomSimulator(options),
  credentials: (sim) => ({ access_token: prop(sim, 'accessToken') }),
};
