/** An oauth2 variant's callback_fields (credential fields from the OAuth callback's query): what the loader accepts. */
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadManifestText } from '../../src/manifest/index.ts';

const BASE = {
  manifest_version: 1,
  type: 'ledgerdemo',
  title: 'Ledger demo',
  kind: 'accounting',
  base_url: { default: 'https://api.example.com/v3/company/{{credentials.company_id}}' },
  auth: [
    {
      name: 'oauth',
      type: 'oauth2',
      fields: {
        access_token: { type: 'string', secret: true },
        refresh_token: { type: 'string', secret: true },
        company_id: { type: 'string', pattern: '[0-9]+' },
      },
      authorize_url: 'https://auth.example.com/authorize',
      token_url: 'https://auth.example.com/token',
      callback_fields: { company_id: 'realmId' },
    },
  ],
  entities: {
    items: {
      primary_key: 'id',
      record: { type: 'object', properties: { id: { type: 'string' } } },
      actions: { list: { request: { method: 'GET', path: '/items' }, response: { records: '{{body.items}}' } } },
    },
  },
};

type Variant = Record<string, any>;
const problems = (edit: (v: Variant) => void): string[] => {
  const m = parse(stringify(BASE)) as typeof BASE;
  edit(m.auth[0] as Variant);
  try {
    loadManifestText(stringify(m), 'test.yaml');
    return [];
  } catch (e) {
    return ((e as { errors?: { path: string; message: string }[] }).errors ?? []).map((x) => `${x.path.replace(/^.*#/, '')}: ${x.message}`);
  }
};

describe('manifest loader: callback_fields', () => {
  it('fills a declared non-secret field, once', () => {
    expect(problems(() => undefined)).toEqual([]);
    expect(problems((v) => (v.callback_fields = { refresh_token: 'realmId' }))).toEqual([
      'auth.0.callback_fields.refresh_token: "refresh_token" is secret: only non-secret fields are filled this way',
    ]);
    expect(problems((v) => (v.token_fields = { company_id: '{{body.company}}' }))).toEqual([
      'auth.0.callback_fields.company_id: "company_id" is filled by token_fields or a follow_up too',
    ]);
    expect(problems((v) => (v.callback_fields = { nothing: 'realmId' }))[0]).toMatch(/^auth\.0\.callback_fields\.nothing: /);
  });
});
