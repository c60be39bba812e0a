/** Shared by monday*.test.ts: the Monday simulator (started per file, reset before each test), record checks and calls through the manifest. */
import type { ValidateFunction } from 'ajv';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { createAjv } from '../../src/manifest/index.ts';
import { boardOrder, type ItemRec } from '../../connectors/monday/simulator/data.ts';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';

export type Rec = Record<string, unknown>;

/** A copy of a schema with additionalProperties: false on every object that lists properties. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Rec = {};
  for (const [k, v] of Object.entries(schema as Rec))
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as Rec).map(([p, s]) => [p, closed(s)])) : closed(v);
  if (out['properties'] !== undefined) out['additionalProperties'] = false;
  return out;
}

export const manifest = getConnector('monday');
const ajv = createAjv();
const validators = new Map<string, ValidateFunction>();
for (const [name, entity] of manifest.entities) validators.set(name, ajv.compile(closed(entity.def.record) as Rec));

export function expectValid(entity: string, records: Rec[]): void {
  const v = validators.get(entity) as ValidateFunction;
  for (const r of records) expect(v(r), `${entity} ${JSON.stringify(v.errors)}`).toBe(true);
}

/** The calling file's simulator once useMondaySimulator's beforeAll ran (a live binding: each test file has its own). */
export let sim: MondaySimulator;

/** Starts the simulator for the calling file, resets its state, data and limits before each test, closes it after. */
export function useMondaySimulator(): void {
  beforeAll(async () => {
    sim = await startMondaySimulator({ size: 300 });
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.reset();
    sim.resetData();
    sim.complexity.budget = 10_000_000;
    sim.complexity.windowSeconds = 60;
    sim.setRateLimit(sim.sidecar.rate_limit!);
    sim.oauth.deny = false;
  });
}

// `connect()` is the library API; the runtime is used where a test needs config (API version).
export const monday = () => connect('monday', { credentials: { api_key: sim.apiKey }, baseUrl: sim.url, retry: { baseDelayMs: 10 } });
export const runtime = (config: Rec = {}, credentials: Rec = { api_key: sim.apiKey }) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, config, retry: { baseDelayMs: 10 } });
export const list = (entity: string, params?: Rec) => monday().execute(entity as never, 'list' as never, params as never) as Promise<ListEnvelope>;
export const get = (entity: string, params: Rec) => monday().execute(entity as never, 'get' as never, params as never) as Promise<RecordEnvelope>;
export const write = (entity: string, action: 'create' | 'update', params: Rec) =>
  monday().execute(entity as never, action as never, params as never) as Promise<RecordEnvelope>;

/** The GraphQL request bodies the simulator received. */
export const sent = () => sim.requests.filter((r) => r.path === '/v2').map((r) => JSON.parse(r.rawBody) as { query: string; variables?: Rec });

export const board0 = () => sim.state.boards[0]!;
export const orderedItems = (boardIndex = 0): ItemRec[] => boardOrder(sim.state, sim.state.boards[boardIndex]!).map((id) => sim.state.items.get(id)!);
