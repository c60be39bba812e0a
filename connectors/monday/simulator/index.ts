/**
 * The monday.com simulator: the generic GraphQL simulator (src/simulator/graphql-simulator.ts)
 * serving monday's own 2026-10 SDL (connectors/monday/schema-2026-10.graphql) with the sidecar
 * connectors/monday/simulator.yaml, which declares the endpoint, auth, API versions, the
 * per-minute complexity budget and request limit, graphql-ruby error wording, monday's error
 * shapes and the OAuth flow, the seeded users, teams, workspaces, tags and boards, their relations
 * and lists. The code here seeds the items and their updates over the same store, and resolves
 * what no declaration captures: column values, items_page's query rules, the mutations.
 *
 * Usage: `const sim = await startMondaySimulator(); connect('monday', { credentials: { api_key:
 * sim.apiKey }, baseUrl: sim.url })`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../../src/manifest/connectors-dir.ts';
import type { ComplexityBudget } from '../../../src/simulator/graphql/complexity.ts';
import { startGraphqlSimulator, type GraphqlSimulator } from '../../../src/simulator/graphql-simulator.ts';
import { loadSidecar } from '../../../src/simulator/sidecar.ts';
import { seedState, type MondayState } from './data.ts';
import { codedResolvers } from './resolvers.ts';

export type { MondayState } from './data.ts';

const DIR = join(CONNECTORS_DIR, 'monday');

export interface MondaySimulatorOptions {
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed for the account's data; default 1. */
  seed?: number;
  /** Total items across the boards (1..100000); default 300. */
  size?: number;
  /** Complexity budget (points per window, window length, largest query); default the sidecar's. */
  complexity?: { budget?: number; windowSeconds?: number; maxQuery?: number };
  /** HTTP status of an exhausted budget: monday answers 200 (an application error); 429 tests a transport-level limit. */
  complexityHttpStatus?: number;
}

export interface MondaySimulator extends Omit<GraphqlSimulator, 'complexity'> {
  /** The per-minute complexity budget (the sidecar's graphql.complexity); change budget / windowSeconds at runtime. */
  complexity: ComplexityBudget;
  /** A valid personal API token (sent as `Authorization: <token>`). */
  apiKey: string;
  /** The account's data (replaced by resetData). */
  readonly state: MondayState;
  /** Re-seed the data; forget the cursors, complexity budget and request limit (faults and the request log are kept). */
  resetData(): void;
}

/** Start the monday simulator on a loopback port. */
export async function startMondaySimulator(options: MondaySimulatorOptions = {}): Promise<MondaySimulator> {
  const seed = options.seed ?? 1;
  const size = options.size ?? 300;
  const sidecar = loadSidecar(join(DIR, 'simulator.yaml'));
  if (options.complexityHttpStatus !== undefined)
    sidecar.graphql = { ...sidecar.graphql, status: { ...sidecar.graphql?.status, complexity_exhausted: options.complexityHttpStatus } };
  // Personal tokens are JWTs; an opaque token of the same look is enough. The token and the OAuth
  // app derive from the seed, so the sandbox's sample credentials survive restarts.
  const derived = (label: string, bytes: number): Buffer =>
    createHash('sha256')
      .update(`monday-sim:${label}:${String(seed)}`)
      .digest()
      .subarray(0, bytes);
  const apiKey = `eyJhbGciOiJIUzI1NiJ9.sim-${String(seed)}.${derived('api-key', 18).toString('base64url')}`;
  let state: MondayState;
  const sim = await startGraphqlSimulator({
    schema: readFileSync(join(DIR, 'schema-2026-10.graphql'), 'utf8'),
    sidecar,
    port: options.port,
    host: options.host,
    seed,
    tokens: [apiKey],
    oauthClient: { clientId: `sim_client_${derived('client-id', 6).toString('hex')}`, clientSecret: derived('client-secret', 16).toString('hex') },
    resolvers: codedResolvers(() => ({ state, meId: (state.users[0] as { id: string }).id })),
    vars: () => ({ account_id: Number(state.account.id), slug: state.account.slug }),
  });
  // The account's records are the simulator's store (the sidecar's, then the items and updates seeded here).
  const tables = Object.fromEntries(
    ['User', 'Team', 'Workspace', 'Tag', 'Board', 'Item', 'Update', 'ActivityLogType', 'Webhook'].map((t) => [t, sim.resources.get(t)?.records]),
  ) as unknown as MondayState['tables'];
  state = seedState({ seed, size }, tables);
  const c = options.complexity ?? {};
  Object.assign(sim.complexity ?? {}, {
    ...(c.budget ? { budget: c.budget } : {}),
    ...(c.windowSeconds ? { windowSeconds: c.windowSeconds } : {}),
    ...(c.maxQuery ? { maxQuery: c.maxQuery } : {}),
  });
  return Object.defineProperties(sim, {
    apiKey: { value: apiKey, enumerable: true },
    state: { get: () => state, enumerable: true },
    resetData: {
      value: () => {
        sim.reseed();
        state = seedState({ seed, size }, tables);
        sim.complexity?.reset();
        sim.resetRateLimit();
      },
    },
  }) as MondaySimulator;
}
