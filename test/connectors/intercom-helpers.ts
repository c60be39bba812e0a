/** Shared by intercom*.test.ts: the Intercom simulator (started per file, reset before each test) and calls through the manifest. */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { connect, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { recordChecker } from '../helpers/records.ts';

export type Rec = Record<string, unknown>;

export const manifest = getConnector('intercom');
export const expectValid = recordChecker(manifest);

/** The calling file's simulator once useIntercomSimulator's beforeAll ran (a live binding: each test file has its own). */
export let sim: IntercomSimulator;

/** Starts the simulator for the calling file, resets it (and lifts its rate limit) before each test, closes it after. */
export function useIntercomSimulator(): void {
  beforeAll(async () => {
    sim = await startIntercomSimulator({ seed: 5, size: 300 });
  });
  afterAll(() => sim.close());
  beforeEach(() => {
    sim.reset();
    sim.setRateLimit({ limit: 1_000_000, window_seconds: 10 });
  });
}

export const intercom = (accessToken: string = sim.accessToken) =>
  connect('intercom', { credentials: { access_token: accessToken }, baseUrl: sim.url, retry: { baseDelayMs: 10 } });
export const run = (entity: string, action: string, params?: Rec) =>
  intercom().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
export const list = (entity: string, params?: Rec) => run(entity, 'list', params) as Promise<ListEnvelope>;
export const one = (entity: string, action: 'get' | 'create' | 'update', params: Rec) => run(entity, action, params) as Promise<RecordEnvelope>;
export async function all(entity: string, params?: Rec): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const r of intercom().records(entity as never, params as never)) out.push(r as Rec);
  return out;
}
/** Requests the simulator received for a path (API calls only). */
export const sent = (path?: string) => sim.requests.filter((r) => (path === undefined ? true : r.path === path));

/** The simulator's records of a resource (its generic store), in stored order, and their ids. */
export const stored = (resource: string): Rec[] => sim.records(resource);
export const ids = (resource: string): string[] => stored(resource).map((r) => r.id as string);
export const size = (resource: string): number => sim.resources.get(resource)?.records.size ?? 0;

/** A contact as the manifest returns it: Intercom's avatar object mapped to its URL (spec type string). */
export const asContact = (wire: Rec): Rec => ({ ...wire, avatar: ((wire.avatar as Rec | null)?.image_url as string | undefined) ?? null });
/** A conversation as the manifest returns it: team_assignee_id as a string (spec type). */
export const asConversation = (wire: Rec): Rec => ({
  ...wire,
  team_assignee_id: wire.team_assignee_id === null || wire.team_assignee_id === undefined ? null : String(wire.team_assignee_id),
});
