/**
 * Granola's simulator for tests and benchmarks: the generic OpenAPI simulator (src/simulator) on
 * our derivation of Granola's API (connectors/granola/openapi.yaml) and its sidecar
 * (connectors/granola/simulator.yaml), which say everything Granola does: Bearer API keys,
 * cursor pages newest first, the date filters, include=transcript, `{message}` errors and the
 * rate limit (a bucket of 25 refilled at 5 a second). `switchboard sandbox` runs the same two
 * files with no code at all.
 *
 * What this module adds is the test API many tests share: a seeded API key per seed, the number
 * of notes, a rate limit given as burst and rate, and count/ids/note/touch/remove/add over the
 * simulator's record store (`addRecord`, `updateRecord`, `removeRecord`).
 * Faults (5xx, latency, malformed bodies) come from the shared sim-server `inject`.
 */
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../../src/manifest/connectors-dir.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../../src/simulator/openapi-simulator.ts';
import { loadSidecar } from '../../../src/simulator/sidecar.ts';
import { mixSeed, seededRandom } from '../../../src/simulator/sim-server.ts';

const CONNECTOR = join(CONNECTORS_DIR, 'granola');

export interface GranolaPerson {
  name: string | null;
  email: string;
}

/** A note as the list answers it. */
export interface GranolaNoteSummary {
  id: string;
  object: 'note';
  title: string | null;
  owner: GranolaPerson;
  created_at: string;
  updated_at: string;
}

/** A note as GET /v1/notes/{id} answers it; `transcript` only with include=transcript. */
export interface GranolaNote extends GranolaNoteSummary {
  web_url: string;
  calendar_event: {
    event_title: string | null;
    invitees: { email: string }[];
    organiser: string | null;
    calendar_event_id: string | null;
    scheduled_start_time: string | null;
    scheduled_end_time: string | null;
  } | null;
  attendees: GranolaPerson[];
  folder_membership: { id: string; object: 'folder'; name: string }[];
  summary_text: string;
  summary_markdown: string | null;
  transcript?: { speaker: { source: 'microphone' | 'speaker'; diarization_label?: string }; text: string; start_time: string; end_time: string }[];
}

/** Fields a test may overwrite with `touch(id, patch)` or set with `add(patch)`. */
export interface GranolaNotePatch {
  title?: string | null;
  summary_text?: string;
  summary_markdown?: string | null;
}

export interface GranolaSimulatorOptions {
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always produces the same notes, ids and API key. Default 1. */
  seed?: number | undefined;
  /** Number of notes; default the sidecar's (300). */
  size?: number | undefined;
  /** The bucket per API key; `false` disables limiting (benchmarks). Default Granola's: 25 at once, 5/s. */
  rateLimit?: { burst: number; perSecond: number } | false | undefined;
  /** Use this API key instead of the seeded one. */
  apiKey?: string | undefined;
}

export interface GranolaSimulator extends OpenApiSimulator {
  /** The API key the simulator accepts (`Authorization: Bearer <apiKey>`). */
  apiKey: string;
  /** Notes currently present. */
  count(): number;
  /** Ids of the notes currently present, in list order (newest first). */
  ids(): string[];
  /** A note exactly as GET /v1/notes/{id} would return it (without auth or rate limiting). */
  note(id: string, options?: { transcript?: boolean }): GranolaNote | undefined;
  /** Mark a note edited: updated_at becomes now, later than every other note's, with the patch's fields. Throws for an unknown id. */
  touch(id: string, patch?: GranolaNotePatch): GranolaNote;
  /** Delete a note; false when there was none. */
  remove(id: string): boolean;
  /** Create a note that is newer than every existing one. */
  add(patch?: GranolaNotePatch): GranolaNote;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Start a Granola simulator on a loopback port. */
export async function startGranolaSimulator(options: GranolaSimulatorOptions = {}): Promise<GranolaSimulator> {
  const seed = options.seed ?? 1;
  if (options.size !== undefined && (!Number.isInteger(options.size) || options.size < 0))
    throw new RangeError(`size must be a non-negative integer, got ${options.size}`);
  const rand = seededRandom(mixSeed(seed, 0x4b));
  const apiKey = options.apiKey ?? `grn_${Array.from({ length: 28 }, () => ALNUM[Math.floor(rand() * ALNUM.length)]).join('')}`;
  const sidecar = loadSidecar(join(CONNECTOR, 'simulator.yaml'));
  const notes = sidecar.resources?.['notes'] ?? {};
  // A large dataset (benchmarks: 100 000 notes) is packed closer, so that every note is older than now.
  const size = options.size ?? notes.records ?? 0;
  const step = Math.max(1, Math.min(notes.timestamps?.step_seconds ?? 60, Math.floor((300 * 86_400) / Math.max(1, size))));
  sidecar.resources = { ...sidecar.resources, notes: { ...notes, records: size, timestamps: { ...notes.timestamps, step_seconds: step } } };
  const limit = sidecar.rate_limit;
  const rl = options.rateLimit;
  const sim = await startOpenApiSimulator({
    description: join(CONNECTOR, 'openapi.yaml'),
    sidecar,
    seed,
    tokens: [apiKey],
    ...(rl === false
      ? { rateLimit: false }
      : rl !== undefined && limit !== undefined
        ? { rateLimit: { ...limit, limit: rl.burst, window_seconds: rl.burst / rl.perSecond } }
        : {}),
    port: options.port ?? 0,
    ...(options.host !== undefined ? { host: options.host } : {}),
  });
  const store = (): Map<string, { record: Record<string, unknown> }> => sim.resources.get('notes')?.records ?? new Map();
  const view = (record: Record<string, unknown>, transcript: boolean): GranolaNote => {
    const note = structuredClone(record) as unknown as GranolaNote;
    if (!transcript) delete note.transcript;
    return note;
  };
  return Object.assign(sim, {
    apiKey,
    count: () => store().size,
    ids: () => [...store().keys()].reverse(),
    note: (id: string, o?: { transcript?: boolean }) => {
      const s = store().get(id);
      return s === undefined ? undefined : view(s.record, o?.transcript === true);
    },
    touch: (id: string, patch?: GranolaNotePatch) => {
      const record = sim.updateRecord('notes', id, { ...patch });
      if (record === undefined) throw new Error(`no Granola note ${id}`);
      return view(record, false);
    },
    remove: (id: string) => sim.removeRecord('notes', id),
    add: (patch?: GranolaNotePatch) => view(sim.addRecord('notes', { ...patch }), false),
  });
}
