/**
 * Google Sheets' quirks: values are named by a spreadsheet's id and an A1 range (a sheet's name in
 * quotes when it has spaces, `!`, `:`), sent escaped in the path, with valueInputOption (default
 * USER_ENTERED) and includeValuesInResponse, an append posted to `{range}:append` answering the
 * rows written under updates.updatedData; no check (Sheets has no identity endpoint). Reads and
 * writes run against the simulator under a spreadsheet created first (no list of spreadsheets to
 * find one); the request shapes and the append (the generic simulator does not serve
 * `{range}:append`) against a stand-in fetch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, SwitchboardError, type RecordEnvelope } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { startConnectorSimulator, type ConnectorSimulator } from '../helpers/simulators.ts';

const sheets = getConnector('google_sheets');
const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('google_sheets', () => {
  let sim: ConnectorSimulator;
  let rt: ConnectorRuntime;
  beforeAll(async () => {
    sim = await startConnectorSimulator('google_sheets');
    rt = new ConnectorRuntime(sheets, sim.credentials, { baseUrl: sim.baseUrl, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  });
  afterAll(() => sim?.close());

  it('reads and writes a range under a created spreadsheet; an unknown spreadsheet is upstream_not_found', async () => {
    const made = ((await rt.execute('spreadsheets', 'create', { title: 'Q4 budget' })) as RecordEnvelope).data;
    const spreadsheet_id = made['spreadsheetId'] as string;
    expect(spreadsheet_id).toMatch(/^[A-Za-z0-9_-]{44}$/);
    const read = ((await rt.execute('values', 'get', { spreadsheet_id, range: 'Sheet1!A5:C5' })) as RecordEnvelope).data;
    expect(read['range']).toBe('Sheet1!A5:C5');
    const written = (
      (await rt.execute('values', 'update', { spreadsheet_id, range: 'Sheet1!A5:C5', values: [['Printing', 'Dev Patel', '640.00']] })) as RecordEnvelope
    ).data;
    expect(written).toMatchObject({ range: 'Sheet1!A5:C5', majorDimension: 'ROWS' });
    const e = await rt.execute('spreadsheets', 'get', { spreadsheet_id: `${spreadsheet_id.slice(0, -4)}zzzz` }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SwitchboardError);
    expect((e as SwitchboardError).code).toBe('upstream_not_found');
  });

  it('refuses an unknown token as upstream_credentials_rejected (no check: a spreadsheet read shows it)', async () => {
    expect(sheets.manifest.check).toBeUndefined();
    const bad = new ConnectorRuntime(sheets, { access_token: 'ya29.a0AfB_refused' }, { baseUrl: sim.baseUrl, limiter: null, retry: { maxAttempts: 1 } });
    const e = await bad.execute('spreadsheets', 'create', { title: 'x' }).catch((x: unknown) => x);
    expect((e as SwitchboardError).code).toBe('upstream_credentials_rejected');
  });

  it('sends A1 ranges escaped in the path, valueInputOption USER_ENTERED by default, and reads the append from updates.updatedData', async () => {
    const calls: { url: URL; method: string; body: unknown }[] = [];
    const upstream: FetchLike = async (input, init) => {
      const url = new URL(String(input));
      calls.push({ url, method: init?.method ?? 'GET', body: init?.body === undefined ? undefined : JSON.parse(String(init.body)) });
      const range = decodeURIComponent(url.pathname.split('/values/')[1]!.replace(/:append$/, ''));
      if (url.pathname.endsWith(':append'))
        return json(200, {
          spreadsheetId: 's1',
          tableRange: range,
          updates: { updatedRange: "'Q3 budget'!A7:B7", updatedData: { range: "'Q3 budget'!A7:B7", majorDimension: 'ROWS', values: [['=SUM(B1:B6)', '42']] } },
        });
      if (init?.method === 'PUT')
        return json(200, { spreadsheetId: 's1', updatedRange: range, updatedData: { range, majorDimension: 'ROWS', values: [['x']] } });
      return json(200, { range, majorDimension: 'ROWS', values: [['a', 'b']] });
    };
    const t = new ConnectorRuntime(sheets, { access_token: 'ya29.t' }, { fetch: upstream, limiter: null });
    const got = ((await t.execute('values', 'get', { spreadsheet_id: 's1', range: "'Q3 budget'!A1:B6", value_render_option: 'FORMULA' })) as RecordEnvelope)
      .data;
    expect(got['range']).toBe("'Q3 budget'!A1:B6");
    expect(calls[0]!.url.pathname).toBe(`/v4/spreadsheets/s1/values/${encodeURIComponent("'Q3 budget'!A1:B6")}`);
    expect(calls[0]!.url.searchParams.get('valueRenderOption')).toBe('FORMULA');
    const appended = (
      (await t.execute('values', 'create', { spreadsheet_id: 's1', range: "'Q3 budget'!A:B", values: [['=SUM(B1:B6)', 42]] })) as RecordEnvelope
    ).data;
    expect(appended['range']).toBe("'Q3 budget'!A7:B7");
    expect(calls[1]!.method).toBe('POST');
    expect(calls[1]!.url.pathname).toBe(`/v4/spreadsheets/s1/values/${encodeURIComponent("'Q3 budget'!A:B")}:append`);
    expect(Object.fromEntries(calls[1]!.url.searchParams)).toEqual({ valueInputOption: 'USER_ENTERED', includeValuesInResponse: 'true' });
    expect(calls[1]!.body).toEqual({ majorDimension: 'ROWS', values: [['=SUM(B1:B6)', 42]] });
    await t.execute('values', 'update', { spreadsheet_id: 's1', range: 'Sheet1!A1', values: [['x']], value_input_option: 'RAW' });
    expect(calls[2]!.method).toBe('PUT');
    expect(calls[2]!.url.searchParams.get('valueInputOption')).toBe('RAW');
    expect(calls[2]!.body).toEqual({ range: 'Sheet1!A1', majorDimension: 'ROWS', values: [['x']] });
  });
});
