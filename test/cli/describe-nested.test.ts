/**
 * `describe` shows what an object param holds: Zendesk's required `comment` of tickets.create
 * lists body, html_body, public, ... (as `comment.body` rows in the table, as `fields` in
 * --json), an array of objects its elements' fields (`a[].b`), nested objects level by level,
 * with their own `required`. The credential variants are counted as they are listed.
 */
import { describe, expect, it } from 'vitest';
import { describeManifest, type ParamInfo } from '../../src/manifest/describe.ts';
import { getConnector, loadManifestText } from '../../src/manifest/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

const MANIFEST = `
manifest_version: 1
type: nested
title: Nested
kind: commerce
base_url: { default: "https://nested.example.com" }
auth:
  - name: key
    type: api_key
    fields: { key: { type: string, secret: true } }
    header: x-key
    value: "{{credentials.key}}"
entities:
  orders:
    primary_key: id
    record: { type: object, properties: { id: { type: string } } }
    actions:
      create:
        params:
          customer:
            type: object
            required: true
            properties:
              email: { type: string, description: Where receipts go }
              address:
                type: object
                required: [city]
                properties: { city: { type: string }, zip: { type: string, pattern: "^[0-9]{5}$" } }
          lines:
            type: array
            items: { type: object, required: [sku], properties: { sku: { type: string }, qty: { type: integer, minimum: 1 } } }
          tags: { type: array, items: { type: string } }
        request: { method: POST, path: /orders, body: { customer: "{{params.customer}}" } }
        response: { record: "{{body}}" }
`;

const byName = (ps: ParamInfo[] | undefined, name: string): ParamInfo | undefined => ps?.find((p) => p.name === name);

describe('describe: nested params', () => {
  it("lists an object param's fields, an array's element fields, level by level, with their own required", () => {
    const m = loadManifestText(MANIFEST, 'nested.yaml');
    const params = describeManifest(m).entities[0]!.actions.find((a) => a.name === 'create')!.params;
    const c = byName(params, 'customer')!;
    expect(c).toMatchObject({ type: 'object', required: true });
    expect(byName(c.fields, 'email')).toMatchObject({ type: 'string', required: false, description: 'Where receipts go' });
    const address = byName(c.fields, 'address')!;
    expect(address.fields?.map((f) => [f.name, f.required])).toEqual([
      ['city', true],
      ['zip', false],
    ]);
    expect(byName(address.fields, 'zip')!.constraints).toBe('pattern ^[0-9]{5}$');
    expect(byName(params, 'lines')!.fields?.map((f) => [f.name, f.type, f.required])).toEqual([
      ['sku', 'string', true],
      ['qty', 'integer', false],
    ]);
    expect(byName(params, 'tags')!.fields).toBeUndefined(); // an array of strings has no fields
    // With schemas (the MCP describe tool), params_schema holds them: no duplicate.
    const withSchemas = describeManifest(m, { schemas: true }).entities[0]!.actions[0]!;
    expect(byName(withSchemas.params, 'customer')!.fields).toBeUndefined();
    expect(JSON.stringify(withSchemas.params_schema)).toContain('"city"');
  });

  it("Zendesk's tickets create: the required comment's fields, in the table and in --json", async () => {
    const info = describeManifest(getConnector('zendesk'));
    const comment = byName(info.entities.find((e) => e.name === 'tickets')!.actions.find((a) => a.name === 'create')!.params, 'comment')!;
    expect(comment.fields?.map((f) => f.name)).toEqual(expect.arrayContaining(['body', 'html_body', 'public', 'author_id', 'uploads']));

    const r = await runSwitchboard(['describe', 'zendesk', 'tickets', 'create']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}comment\s+object\s+yes\s+A comment/m);
    expect(r.stdout).toMatch(/^ {2}comment\.body\s+string\s+The comment in plain text/m);
    expect(r.stdout).toMatch(/^ {2}comment\.public\s+boolean\s+/m);
    const j = await runSwitchboard(['describe', 'zendesk', 'tickets', 'create', '--json']);
    const out = JSON.parse(j.stdout) as { params: ParamInfo[] };
    expect(byName(byName(out.params, 'comment')!.fields, 'body')).toMatchObject({ type: 'string', required: false });
  });

  it('counts the credential variants it lists', async () => {
    const zendesk = await runSwitchboard(['describe', 'zendesk']);
    expect(zendesk.stdout).toContain('Credentials (2 variants; give the fields of one):');
    expect(zendesk.stdout).not.toContain('one variant');
    const granola = await runSwitchboard(['describe', 'granola']);
    expect(granola.stdout).toContain('Credentials (one variant):');
  });
});
