/**
 * Every connector's simulator, started the way the sandbox starts it, with the sample
 * credentials it accepts. The one place tests reach the sandbox's list of simulators: when that
 * machinery moves, only the import below changes.
 */
import { SIMULATORS, type AnySimulator } from '../../src/simulator/sandbox.ts';

export type { AnySimulator } from '../../src/simulator/sandbox.ts';

/** A started simulator of one connector type: where it listens, credentials it accepts. */
export interface ConnectorSimulator {
  type: string;
  baseUrl: string;
  credentials: Record<string, string>;
  /** The simulator itself (request log, fault injection, reset). */
  sim: AnySimulator;
  close(): Promise<void>;
}

/** The connector types that have a simulator in this checkout, in the sandbox's order. */
export function simulatedTypes(): string[] {
  return SIMULATORS.map((e) => e.type);
}

/** Start the simulator of `type` on a free loopback port; fails when the type has none. */
export async function startConnectorSimulator(type: string): Promise<ConnectorSimulator> {
  const entry = SIMULATORS.find((e) => e.type === type);
  if (entry === undefined) throw new Error(`no simulator for connector type ${type}`);
  const sim = await entry.start({ port: 0, host: '127.0.0.1' });
  if (sim === undefined) throw new Error(`the simulator module of ${type} is not present`);
  return { type, baseUrl: `http://127.0.0.1:${sim.port}`, credentials: entry.credentials(sim), sim, close: () => sim.close() };
}
