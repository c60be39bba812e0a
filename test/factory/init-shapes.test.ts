/**
 * `switchboard init --from-openapi` on vendor shapes beyond `/things` and `/things/{id}` (issue 40,
 * classes 1–3), on descriptions of our own: ids named the vendor's way (`{Sid}` → `sid`,
 * `{InvoiceID}` → `InvoiceID`, `{id}` → `ReportID`), a `.json` suffix on every path, `#fragment`
 * pseudo-paths, collections of the same name under different parents, one record as the one item
 * of an array under a plural key, and a list answer's records beside a sort-order or `_links` array.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { scaffoldFromOpenApi } from '../../src/factory/init-openapi.ts';
import { renderScaffold } from '../../src/factory/scaffold.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { pathShapes } from '../../src/simulator/openapi/path-shape.ts';

type Rec = Record<string, any>;
const SHAPES = 'test/fixtures/factory/path-shapes.yaml';
const PASCAL = 'test/fixtures/factory/pascal-envelopes.yaml';
const ONE_ITEM = 'test/fixtures/factory/one-item-data.yaml';

async function scaffold(file: string): Promise<Rec> {
  const s = await scaffoldFromOpenApi(file, { type: 'acme', descriptionPath: 'openapi.yaml', source: 'test' });
  const yaml = renderScaffold(s);
  const dir = mkdtempSync(join(tmpdir(), 'sb-shapes-'));
  writeFileSync(join(dir, 'openapi.yaml'), readFileSync(file));
  loadManifestText(yaml, join(dir, 'connector.yaml'));
  return parse(yaml) as Rec;
}

describe('path shapes', () => {
  it('reads a suffix after an id (or on most paths) and a #fragment as no part of the resource', () => {
    const shape = pathShapes(['/A/{Sid}.json', '/A.json', '/conversations.list', '/files/{id}#get_link']);
    expect(shape('/A/{Sid}.json')).toBe('/A/{Sid}');
    expect(shape('/A/{X}/Messages.json')).toBe('/A/{X}/Messages');
    expect(shape('/conversations.list')).toBe('/conversations.list');
    expect(shape('/files/{id}#get_link')).toBe('/files/{id}');
    // RPC methods: no suffix follows an id, and no one suffix is on most paths.
    expect(pathShapes(['/chat.postMessage', '/conversations.list', '/users.info'])('/conversations.list')).toBe('/conversations.list');
  });

  it('scaffolds one entity per resource: .json suffixes, sid ids, fragments, same-name collections', async () => {
    const m = await scaffold(SHAPES);
    expect(Object.keys(m['entities']).sort()).toEqual([
      'accounts',
      'files',
      'folders',
      'items',
      'lists',
      'lists_members',
      'messages',
      'segments',
      'segments_members',
    ]);
    const messages = m['entities'].messages;
    expect(messages.primary_key).toBe('sid');
    expect(Object.keys(messages.actions)).toEqual(['list', 'get', 'create', 'update']);
    expect(messages.actions.update.request).toMatchObject({
      method: 'POST',
      path: '/Accounts/{{params.account_sid}}/Messages/{{params.sid}}.json',
      body_encoding: 'form',
    });
    expect(messages.actions.create.request).toMatchObject({ method: 'POST', path: '/Accounts/{{params.account_sid}}/Messages.json' });
    expect(m['entities'].accounts.primary_key).toBe('sid');
    // The fragment's PUT is the file's update, sent to the path without the fragment.
    expect(m['entities'].files.actions.update.request).toMatchObject({ method: 'PUT', path: '/files/{{params.file_id}}' });
    expect(m['entities'].files.actions.get.request.path).toBe('/files/{{params.file_id}}');
    // Records beside a _links array, and beside a sort-order array.
    expect(m['entities'].segments_members.actions.list.response.records).toBe('{{body.members}}');
    expect(m['entities'].items.actions.list.response.records).toBe('{{body.entries}}');
  });
});

describe('envelopes and ids of a PascalCase API', () => {
  it('unwraps one record from a one-item array under the plural key, in answers and bodies', async () => {
    const invoices = (await scaffold(PASCAL))['entities'].invoices;
    expect(invoices.primary_key).toBe('InvoiceID');
    expect(invoices.record.properties).toHaveProperty('Reference');
    for (const action of ['get', 'create', 'update']) expect(invoices.actions[action].response.record).toBe('{{first body.Invoices}}');
    expect(invoices.actions.create.request.body.Invoices).toHaveLength(1);
    expect(invoices.actions.create.request.body.Invoices[0]).toMatchObject({ Reference: '{{params.reference}}' });
    expect(invoices.actions.update.request.body.Invoices[0]).toMatchObject({ Reference: '{{params.reference}}' });
    expect(invoices.actions.list.response.records).toBe('{{body.Invoices}}');
  });

  it('names the id <Singular>ID for a bare {id}, and takes the records, not the sort order', async () => {
    const reports = (await scaffold(PASCAL))['entities'].reports;
    expect(reports.primary_key).toBe('ReportID');
    expect(reports.actions.list.response.records).toBe('{{body.Rows}}');
    expect(reports.actions.get.response.record).toBe('{{first body.Reports}}');
  });
});

describe('a record answered as the one item of a list', () => {
  it('unwraps a get answered as {data: [record], info} and reads the record schema from it', async () => {
    const leads = (await scaffold(ONE_ITEM))['entities'].leads;
    expect(leads.primary_key).toBe('id');
    expect(leads.actions.get.response.record).toBe('{{first body.data}}');
    expect(Object.keys(leads.record.properties)).toEqual(['id', 'Last_Name', 'Email']);
    expect(leads.actions.list.response.records).toBe('{{body.data}}');
  });
});
