/**
 * The "done when" on a real description the project had never used: Xero's accounting API
 * (test/fixtures/xero, an extract made by its trim.mjs). `switchboard init` then, with no edit,
 * list/get/create/update of invoices and contacts through `switchboard exec --connectors <dir>`
 * against `switchboard simulate --openapi` on the same description. Its shapes: ids named
 * `InvoiceID`/`ContactID` by the item paths, one record as the one item of `{"Invoices": [...]}`
 * in answers and bodies, updates by POST on the item path, a required `xero-tenant-id` header.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runSwitchboard, startSwitchboard } from '../helpers/process.ts';

type Rec = Record<string, any>;
const XERO = 'test/fixtures/xero/xero_accounting.yaml';

describe('init → simulate → exec on Xero accounting', () => {
  let stop: (() => Promise<number | null>) | undefined;
  let url: string;
  const out = join(mkdtempSync(join(tmpdir(), 'sb-init-xero-')), 'connectors');
  beforeAll(async () => {
    const sim = await startSwitchboard(['simulate', '--openapi', XERO, '--port', '0', '--seed', '1'], /^}$/, { deadlineMs: 60_000 });
    stop = sim.stop;
    url = `${(JSON.parse(sim.lines.join('\n')) as { base_url: string }).base_url.replace(/\/$/, '')}/api.xro/2.0`;
  }, 90_000);
  afterAll(async () => {
    await stop?.();
  });

  it('scaffolds a manifest that runs list, get, create and update of two entities unedited', async () => {
    const init = await runSwitchboard(['init', 'xero', '--from-openapi', XERO, '--entities', 'invoices,contacts', '--out', out]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect((await runSwitchboard(['validate', '--connectors', out])).code).toBe(0);
    const manifest = parse(readFileSync(join(out, 'xero', 'connector.yaml'), 'utf8')) as Rec;
    expect(manifest['entities'].invoices.primary_key).toBe('InvoiceID');
    expect(manifest['entities'].contacts.primary_key).toBe('ContactID');

    const exec = async (entity: string, action: string, params: Rec): Promise<Rec> => {
      const r = await runSwitchboard(['exec', 'xero', entity, action, '--params', JSON.stringify(params), '--base-url', url, '--connectors', out], {
        // The tenant header every operation requires is a credential field (init's class 7), not a param.
        SWITCHBOARD_CREDENTIALS: JSON.stringify({ access_token: 'xero-test-token', xero_tenant_id: 'tenant-1' }),
      });
      expect(r.stderr, `${entity}.${action}`).toBe('');
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout) as Rec;
    };

    // Invoices: the body goes out as {"Invoices": [{...}]}, the record comes back as the one item of that array.
    const invoice = (await exec('invoices', 'create', { type: 'ACCREC', reference: 'Order 66', contact: { Name: 'Ann Lee' } }))['data'] as Rec;
    expect(invoice).toMatchObject({ Type: 'ACCREC', Reference: 'Order 66' });
    const invoiceId = String(invoice['InvoiceID']);
    expect(invoiceId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect((await exec('invoices', 'get', { invoice_id: invoiceId }))['data']).toMatchObject({ InvoiceID: invoiceId, Reference: 'Order 66' });
    expect((await exec('invoices', 'update', { invoice_id: invoiceId, reference: 'Order 67' }))['data']).toMatchObject({
      InvoiceID: invoiceId,
      Reference: 'Order 67',
    });
    expect((await exec('invoices', 'get', { invoice_id: invoiceId }))['data']).toMatchObject({ Reference: 'Order 67' });
    const invoices = (await exec('invoices', 'list', {}))['data'] as Rec[];
    expect(invoices.length).toBeGreaterThan(1);
    expect(invoices.map((i) => i['InvoiceID'])).toContain(invoiceId);

    // Contacts: the same four actions.
    const contact = (await exec('contacts', 'create', { name: 'Bruce Banner', email_address: 'bruce@example.com' }))['data'] as Rec;
    const contactId = String(contact['ContactID']);
    expect(contact).toMatchObject({ Name: 'Bruce Banner' });
    expect((await exec('contacts', 'update', { contact_id: contactId, name: 'Hulk' }))['data']).toMatchObject({ ContactID: contactId, Name: 'Hulk' });
    expect((await exec('contacts', 'get', { contact_id: contactId }))['data']).toMatchObject({ ContactID: contactId, Name: 'Hulk' });
    expect(((await exec('contacts', 'list', {}))['data'] as Rec[]).map((c) => c['ContactID'])).toContain(contactId);
  }, 240_000);

  it('answers 404 for an id it does not hold, in the one-record shape for one it does', async () => {
    const headers = { authorization: 'Bearer t', 'xero-tenant-id': 'tenant-1' };
    expect((await fetch(`${url}/Invoices/00000000-0000-4000-8000-000000000000`, { headers })).status).toBe(404);
    const listed = (await (await fetch(`${url}/Invoices`, { headers })).json()) as { Invoices: Rec[] };
    const first = listed.Invoices[0]!;
    const got = (await (await fetch(`${url}/Invoices/${String(first['InvoiceID'])}`, { headers })).json()) as { Invoices: Rec[] };
    expect(got.Invoices).toHaveLength(1);
    expect(got.Invoices[0]).toMatchObject({ InvoiceID: first['InvoiceID'] });
  });
});
