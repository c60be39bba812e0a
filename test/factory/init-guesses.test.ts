/**
 * Issue 40, classes 6–8 and `init --report`, on two small descriptions of our own:
 * test/fixtures/factory/account-api.yaml (every path under /Accounts/{AccountSid}, comparison
 * filters `DateSent<`, a next_page_uri beside page numbers) and tenant-ledger.yaml (a tenant header
 * on every operation, per-operation OAuth scopes with offline_access, `{"Contacts": [...]}` single
 * answers, a second item path keyed by a number, create bodies nesting records level after level).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { scaffoldFromOpenApi } from '../../src/factory/init-openapi.ts';
import { renderReport } from '../../src/factory/report.ts';
import { renderScaffold, type Scaffold } from '../../src/factory/scaffold.ts';
import { loadManifestText, type LoadedManifest } from '../../src/manifest/index.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

const ACCOUNT = 'test/fixtures/factory/account-api.yaml';
const LEDGER = 'test/fixtures/factory/tenant-ledger.yaml';
type Rec = Record<string, any>;

async function scaffold(file: string, entities: string[]): Promise<{ s: Scaffold; yaml: string; m: Rec; loaded: LoadedManifest }> {
  const s = await scaffoldFromOpenApi(file, { type: 'acme', entities, descriptionPath: 'openapi.yaml', source: 'test' });
  const yaml = renderScaffold(s);
  const dir = mkdtempSync(join(tmpdir(), 'sb-guesses-'));
  writeFileSync(join(dir, 'openapi.yaml'), readFileSync(file));
  const loaded = loadManifestText(yaml, join(dir, 'connector.yaml'));
  return { s, yaml, m: parse(yaml) as Rec, loaded };
}

let account: Awaited<ReturnType<typeof scaffold>>;
let ledger: Awaited<ReturnType<typeof scaffold>>;
beforeAll(async () => {
  account = await scaffold(ACCOUNT, ['messages', 'calls']);
  ledger = await scaffold(LEDGER, ['contacts', 'invoices']);
});

describe('class 6: guesses that were silently wrong', () => {
  it('DateSent, DateSent< and DateSent> are three params (before/after for dates, gte for numbers), each sent under its own key', () => {
    const list = account.m['entities'].messages.actions.list;
    expect(Object.keys(list.params)).toEqual(['to', 'date_sent', 'date_sent_before', 'date_sent_after', 'price_gte', 'page_size', 'page', 'page_token']);
    expect(list.request.query).toMatchObject({
      DateSent: '{{params.date_sent}}',
      'DateSent<': '{{params.date_sent_before}}',
      'DateSent>': '{{params.date_sent_after}}',
      'Price>=': '{{params.price_gte}}',
    });
    expect(account.yaml).toContain('# check: "DateSent<": DateSent < the value');
  });

  it("a next_page_uri in the body is followed as the next page's URL, not page numbers", () => {
    for (const entity of ['messages', 'calls']) {
      const list = account.m['entities'][entity].actions.list;
      expect(list.pagination).toEqual({ type: 'next_url', next: '{{body.next_page_uri}}' });
    }
    expect(account.yaml).toContain("# check: next_url: the response's next_page_uri is the next page's URL, followed rather than setting Page");
  });

  it('a single answer enveloped as a one-item array under the plural key is unwrapped, not {{body}}', () => {
    const contacts = ledger.m['entities'].contacts;
    for (const action of ['get', 'create', 'update']) expect(contacts.actions[action].response.record).toBe('{{first body.Contacts}}');
    expect(contacts.primary_key).toBe('ContactID');
    expect(Object.keys(contacts.record.properties)).toEqual(['ContactID', 'ContactNumber', 'Name', 'Details', 'Billing', 'People']);
  });

  it('the get keyed by the id is chosen over a later path keyed by a secondary number, which is listed as a guess', () => {
    const get = ledger.m['entities'].contacts.actions.get;
    expect(get.request.path).toBe('/Contacts/{{params.contact_id}}');
    expect(ledger.yaml).toContain(
      '# check: the item path /Contacts/{ContactID} is keyed by {ContactID}; also in the description, not scaffolded: /Contacts/{ContactNumber}',
    );
  });
});

describe('class 7: what descriptions rarely say', () => {
  it('OAuth asks for the scopes the chosen operations require (and offline_access), and tokens refresh', () => {
    const oauth = ledger.m['auth'][0];
    expect(oauth.scopes).toEqual(['ledger.contacts', 'ledger.contacts.read', 'ledger.invoices', 'ledger.invoices.read', 'offline_access']);
    expect(oauth).toMatchObject({ refreshes: true, expires: true });
    expect(Object.keys(oauth.fields)).toEqual(['access_token', 'refresh_token', 'expires_at', 'ledger_tenant_id']);
    expect(ledger.yaml).toContain('# check: the offline_access scope asks for refresh tokens');
  });

  it('a header every operation requires is a credential field sent on every request, not a param of each action', () => {
    expect(ledger.m['headers']).toEqual({ Accept: 'application/json', 'ledger-tenant-id': '{{credentials.ledger_tenant_id}}' });
    expect(ledger.m['auth'][0].fields.ledger_tenant_id).toEqual({ type: 'string', description: 'The organisation the call is for.' });
    for (const e of Object.values(ledger.m['entities']) as Rec[])
      for (const a of Object.values(e['actions']) as Rec[]) expect(Object.keys(a['params'] ?? {})).not.toContain('ledger_tenant_id');
  });

  it("a path param leading every path is a credential field in the base URL; the actions' paths are what follows it", () => {
    expect(account.m['base_url']).toEqual({ default: 'https://api.account.test/2010-04-01/Accounts/{{credentials.account_sid}}' });
    expect(account.m['auth'][0].fields.account_sid).toEqual({ type: 'string', pattern: '^AC[0-9a-f]{32}$', description: 'The account that owns the records.' });
    const messages = account.m['entities'].messages.actions;
    expect(messages.get.request.path).toBe('/Messages/{{params.sid}}');
    expect(Object.keys(messages.get.params)).toEqual(['sid']);
    expect(account.m['check']).toEqual({ request: { method: 'GET', path: '/Messages', query: { PageSize: '1' } } });
  });
});

describe('class 8: size', () => {
  it('create bodies nesting records level after level stay reviewable: shapes capped, deeper values typed object', () => {
    // Each body may declare at most 60 properties in all (about two screens of YAML), a record sent
    // as the one item of an array ({"Contacts": [{...}]}) too, though its fields are params of their
    // own: two entities with a create and an update each are then at most ~4 × 70 lines of bodies,
    // plus records, lists and the head: under 500 lines. Inlined in full (as before), 2,138 lines.
    const lines = ledger.yaml.split('\n').length;
    expect(lines).toBeLessThan(500);
    const create = ledger.m['entities'].contacts.actions.create;
    expect(create.request.body).toEqual({ Contacts: [expect.objectContaining({ Details: '{{params.details}}' })] });
    expect(create.params.details.properties.f1_2).toEqual({ type: 'string' });
    expect(create.params.details.properties.a).toEqual({ type: 'object' });
    expect(ledger.yaml).toContain("# check: shape kept 1 level deep (the description's is larger); deeper values are typed object");
  });
});

describe('init --report', () => {
  it('says per entity and action what was inferred and how sure it is', () => {
    const text = renderReport(ledger.s);
    expect(text).toContain('entity contacts\n  primary key: ContactID — guessed: "ContactID" looks like the identifier');
    expect(text).toContain("    request: GET /Invoices — certain: the description's operation");
    expect(text).toContain('    record: {{first body.Contacts}} — guessed: the body has no id of its own: the record is the one item of its "Contacts" array');
    expect(text).toContain('    params: contact_id, contact_number, name, details, billing, people — guessed: details: shape kept 1 level deep');
    expect(text).toContain('    pagination: {"type":"page","param":"page","start":1} — guessed: page numbers from 1 in page');
    expect(text).toMatch(
      /^auth oauth: oauth2 \(fields access_token, refresh_token, expires_at, ledger_tenant_id, scopes ledger\.contacts .*\) — guessed: the scopes/m,
    );
    expect(text).toContain('Not inferred:\n  - rate limit');
  });

  it('is printed by switchboard init --report', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sb-report-')), 'connectors');
    const r = await runSwitchboard(['init', 'acct', '--from-openapi', ACCOUNT, '--entities', 'messages,calls', '--out', out, '--report']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('What `switchboard init` inferred for acct');
    expect(r.stdout).toContain('    pagination: {"type":"next_url","next":"{{body.next_page_uri}}"} — guessed: next_url');
  }, 60_000);
});

describe('the account scaffold, unedited, against the simulator of the same description', () => {
  let sim: OpenApiSimulator;
  const sid = `AC${'0f'.repeat(16)}`;
  beforeAll(async () => {
    // The sidecar says how the vendor pages (PageToken/PageSize, the next page's URL in next_page_uri).
    sim = await startOpenApiSimulator({
      description: ACCOUNT,
      seed: 2,
      sidecar: { records: 0, pagination: { cursor_param: 'PageToken', limit_param: 'PageSize', next_url: 'next_page_uri' } },
    });
  });
  afterAll(() => sim.close());

  it("creates in the credentials' account and follows next_page_uri to the last page", async () => {
    const rt = new ConnectorRuntime(
      account.loaded,
      { username: 'u', password: 'p', account_sid: sid },
      { baseUrl: `${sim.url}/2010-04-01/Accounts/${sid}`, limiter: null },
    );
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(((await rt.execute('messages', 'create', { to: '+15550100', body: `m${i}` })) as { data: Rec }).data['body']);
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${sid}/Messages` });
    const seen: string[] = [];
    for await (const r of rt.records('messages', { page_size: 2 })) seen.push((r as Rec)['body']);
    expect(seen.sort()).toEqual(made.sort());
    const lists = sim.requests.filter((r) => r.method === 'GET');
    expect(lists.map((r) => r.query.get('PageSize'))).toEqual(['2', '2', '2']);
    expect(lists.slice(1).every((r) => r.query.get('PageToken') !== null)).toBe(true);
  });
});
