/**
 * Google Calendar's quirks against the generic simulator serving Google's description with the
 * sidecar: "primary" names the user's own calendar (the calendar list's alias, also as the parent
 * of events), events are written with attendees and read back, and the sync keeps the last page's
 * nextSyncToken and sends it back as syncToken (mode token). What every connector shares is the
 * conformance suite's.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;
const DIR = 'connectors/google_calendar';
const manifest = getConnector('google_calendar');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const calendar = (): ConnectorRuntime => new ConnectorRuntime(manifest, sidecar.sandbox!.credentials as Rec, { baseUrl: sim.url, limiter: null });

describe('google_calendar', () => {
  it('"primary" is the user\'s own calendar, as a calendar and as the parent of its events', async () => {
    const rt = calendar();
    const primary = (await rt.execute('calendars', 'get', { calendar_id: 'primary' })) as RecordEnvelope;
    expect(primary.data).toMatchObject({ summary: 'ada.okafor@northwindlabs.com', primary: true });
    const byId = (await rt.execute('events', 'list', { calendar_id: primary.data['id'], max_results: 2500 })) as ListEnvelope;
    const byAlias = (await rt.execute('events', 'list', { calendar_id: 'primary', max_results: 2500 })) as ListEnvelope;
    expect(byAlias.data.map((e) => e['id'])).toEqual(byId.data.map((e) => e['id']));
    expect(byAlias.data.length).toBeGreaterThan(0);
  });

  it('creates an event with attendees and patches it', async () => {
    const rt = calendar();
    const made = (
      (await rt.execute('events', 'create', {
        calendar_id: 'primary',
        summary: 'Contract renewal',
        start: { dateTime: '2026-05-04T10:00:00+02:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2026-05-04T10:30:00+02:00', timeZone: 'Europe/Berlin' },
        attendees: [{ email: 'emma.schulz@fabrikam.com' }, { email: 'dev.patel@northwindlabs.com', optional: true }],
        send_updates: 'all',
      })) as RecordEnvelope
    ).data;
    expect(made['id']).toMatch(/^[a-v0-9]{5,}$/);
    expect((made['attendees'] as Rec[]).map((a) => a['email'])).toEqual(['emma.schulz@fabrikam.com', 'dev.patel@northwindlabs.com']);
    const patched = ((await rt.execute('events', 'update', { calendar_id: 'primary', event_id: made['id'], summary: 'Renewal call' })) as RecordEnvelope).data;
    expect(patched).toMatchObject({ id: made['id'], summary: 'Renewal call' });
    const got = ((await rt.execute('events', 'get', { calendar_id: 'primary', event_id: made['id'] })) as RecordEnvelope).data;
    expect(got['summary']).toBe('Renewal call');
  });

  it('syncs the primary calendar by sync token', () => {
    const sync = manifest.entities.get('events')!.def.sync!;
    expect(sync.incremental).toEqual({ mode: 'token', param: 'sync_token', token: 'next_sync_token', resync_on: [410] });
    expect(sync.params).toEqual({ calendar_id: 'primary', max_results: 2500 });
  });
});
