import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadManifestText, manifestFiles, loadManifestFile } from '../../src/manifest/index.ts';
import { GRANOLA, mutate, problems } from '../helpers/manifest.ts';

/** A follow_up request as Jira's (docs/manifest.md, Auth variants). */
const FOLLOW_UP = (): Record<string, any> => ({
  request: { method: 'GET', url: 'https://auth.example.com/oauth/resources', headers: { Authorization: 'Bearer {{credentials.access_token}}' } },
  fields: { site_id: '{{body.0.id}}' },
  missing: 'No site was granted',
});

/** Granola with an oauth2 variant whose follow_up is changed one way. */
function withFollowUp(change: (f: Record<string, any>) => void, tokenFields?: Record<string, string>): string {
  return mutate((m) => {
    const f = FOLLOW_UP();
    change(f);
    m.auth.push({
      name: 'oauth',
      type: 'oauth2',
      fields: { access_token: { type: 'string', secret: true }, site_id: { type: 'string' }, webhook_key: { type: 'string', secret: true, required: false } },
      authorize_url: 'https://auth.example.com/authorize',
      token_url: 'https://auth.example.com/oauth/token',
      follow_up: [f],
      ...(tokenFields !== undefined ? { token_fields: tokenFields } : {}),
    });
  });
}

describe('manifest loader', () => {
  it("compiles an oauth2 variant's follow_up requests (Jira: cloud_id from accessible-resources)", () => {
    expect(problems(withFollowUp(() => undefined))).toEqual([]);
    const jira = loadManifestFile('connectors/jira/connector.yaml').auth.find((v) => v.def.name === 'oauth');
    expect(jira?.followUps).toEqual([
      {
        method: 'GET',
        url: 'https://api.atlassian.com/oauth/token/accessible-resources',
        headers: [['Authorization', expect.anything()]],
        fields: [['cloud_id', expect.anything()]],
        missing: expect.stringContaining('no Jira site'),
        onRefresh: false,
      },
    ]);
    const cloudId = jira?.followUps?.[0]?.fields[0]?.[1];
    expect(cloudId?.render({ body: [{ id: 'c-1' }, { id: 'c-2' }] })).toBe('c-1');
    expect(cloudId?.render({ body: [] })).toBeUndefined();
  });

  it('loads every shipped manifest', () => {
    const files = manifestFiles();
    expect(files.length).toBeGreaterThanOrEqual(1);
    for (const f of files) expect(loadManifestFile(f).entities.size).toBeGreaterThan(0);
  });

  // [name, manifest text, expected location fragment, expected message fragment]
  const cases: [string, string, string, RegExp][] = [
    ['YAML syntax error', GRANOLA.replace('title: Granola', 'title: [Granola'), 'test.yaml:', /YAML syntax error/],
    [
      'duplicate YAML key (duplicate entity)',
      GRANOLA.replace('entities:\n  notes:', 'entities:\n  notes:\n    primary_key: id\n  notes:'),
      'test.yaml:',
      /duplicate key/,
    ],
    ['schema violation: unknown top-level key', mutate((m) => (m.colour = 'blue')), 'colour', /unknown key "colour"/],
    ['schema violation: missing required key', mutate((m) => delete m.base_url), '(root)', /missing required key "base_url"/],
    ['schema violation: wrong manifest_version', mutate((m) => (m.manifest_version = 2)), 'manifest_version', /must be 1/],
    ['unknown auth type', mutate((m) => (m.auth[0].type = 'magic')), 'auth.0', /unknown type "magic"|must be/],
    [
      'undeclared template variable (param)',
      mutate((m) => (m.entities.notes.actions.list.request.query.x = '{{params.nope}}')),
      'entities.notes.actions.list.request.query.x',
      /"params.nope" is not a declared param/,
    ],
    [
      'undeclared template variable (root)',
      mutate((m) => (m.entities.notes.actions.list.request.query.x = '{{secrets.key}}')),
      'entities.notes.actions.list.request.query.x',
      /unknown variable "secrets.key"/,
    ],
    [
      'undeclared credential field',
      mutate((m) => (m.auth[0].token = '{{credentials.token}}')),
      'auth.0.token',
      /"credentials.token" is not a credential field/,
    ],
    [
      'path param that is not required',
      mutate((m) => (m.entities.notes.actions.get.params.note_id.required = false)),
      'entities.notes.actions.get.request.path',
      /must be declared with required: true/,
    ],
    [
      'path param that is not declared',
      mutate((m) => (m.entities.notes.actions.get.request.path = '/v1/notes/{{params.id}}')),
      'entities.notes.actions.get.request.path',
      /"params.id" is not a declared param/,
    ],
    ['unknown action name', mutate((m) => (m.entities.notes.actions.delete = m.entities.notes.actions.get)), 'entities.notes.actions', /invalid name "delete"/],
    [
      'hydrate through an action the entity lacks',
      mutate((m) => delete m.entities.notes.actions.get),
      'entities.notes.sync.hydrate.action',
      /does not declare/,
    ],
    ['invalid search field type', mutate((m) => (m.entities.notes.search.fields.title = 'text')), 'entities.notes.search.fields.title', /must be one of/],
    [
      'unknown helper',
      mutate((m) => (m.entities.notes.actions.list.response.records = '{{explode body.notes}}')),
      'entities.notes.actions.list.response.records',
      /unknown helper "explode"/,
    ],
    [
      'template syntax error',
      mutate((m) => (m.entities.notes.actions.list.response.records = '{{body.notes')),
      'entities.notes.actions.list.response.records',
      /template error/,
    ],
    [
      'meta field not in list_meta',
      mutate((m) => (m.entities.notes.actions.list.response.meta.total = '{{body.total}}')),
      'entities.notes.actions.list.response.meta.total',
      /not declared in list_meta/,
    ],
    [
      'missing meta field',
      mutate((m) => delete m.entities.notes.actions.list.response.meta.has_more),
      'entities.notes.actions.list.response.meta',
      /missing meta field "has_more"/,
    ],
    [
      'requires_any naming a param the action lacks',
      mutate((m) => (m.entities.notes.actions.list.requires_any = [['page_size', 'nope']])),
      'entities.notes.actions.list.requires_any.0',
      /"nope" is not a param of this action/,
    ],
    [
      'pagination param not declared',
      mutate((m) => (m.entities.notes.actions.list.pagination.param = 'page')),
      'entities.notes.actions.list.pagination.param',
      /not a declared param/,
    ],
    [
      "an auth variant's own check reading a field of no variant",
      mutate((m) => (m.auth[0].check = { request: { method: 'GET', path: '/v1/me', headers: { 'X-Who': '{{credentials.login}}' } } })),
      'auth.0.check.request.headers.X-Who',
      /"credentials.login" is not a credential field/,
    ],
    [
      "an auth variant's own check with an unknown key",
      mutate((m) => (m.auth[0].check = { request: { method: 'GET', path: '/v1/me' }, colour: 'red' })),
      'auth.0',
      /colour|must/,
    ],
    [
      'for_each.also naming a param the list lacks',
      mutate((m) => (m.entities.notes.sync.for_each = { entity: 'notes', param: 'cursor', value: '{{record.id}}', also: { repo: '{{record.title}}' } })),
      'entities.notes.sync.for_each.also.repo',
      /"repo" is not a param of notes.list/,
    ],
    ['duplicate auth variant name', mutate((m) => m.auth.push({ ...m.auth[0] })), 'auth.1.name', /duplicate auth variant name/],
    ['primary key not in the record', mutate((m) => (m.entities.notes.primary_key = 'uuid')), 'entities.notes.primary_key', /not a property/],
    [
      'list without records',
      mutate((m) => delete m.entities.notes.actions.list.response.records),
      'entities.notes.actions.list.response',
      /needs response.records/,
    ],
    [
      'unknown keyword in a param schema, named at the param',
      mutate((m) => (m.entities.notes.actions.list.params.page_size.b = '')),
      'entities.notes.actions.list.params.page_size',
      /"b" is not a JSON Schema keyword/,
    ],
    [
      'unknown keyword in a record schema',
      mutate((m) => (m.entities.notes.record.properties.title.b = '')),
      'entities.notes.record',
      /"b" is not a JSON Schema keyword/,
    ],
    ['unknown keyword in a list_meta schema', mutate((m) => (m.list_meta.cursor.b = '')), 'list_meta.cursor', /"b" is not a JSON Schema keyword/],
    [
      'invalid record schema',
      mutate((m) => (m.entities.notes.record.properties.title.type = 'strin')),
      'entities.notes.record',
      /invalid JSON Schema: schema is invalid: data\/properties\/title\/type/,
    ],
    [
      'invalid param schema',
      mutate((m) => (m.entities.notes.actions.list.params.page_size.minimum = 'x')),
      'entities.notes.actions.list.params',
      /invalid param schema: schema is invalid: data\/properties\/page_size\/minimum must be number/,
    ],
    [
      'sync param the list does not declare',
      mutate((m) => (m.entities.notes.sync.params = { limit: 5 })),
      'entities.notes.sync.params.limit',
      /not a param of notes.list/,
    ],
    [
      'basic auth password from a field that is not secret',
      mutate(
        (m) =>
          (m.auth = [
            {
              name: 'basic',
              type: 'basic',
              fields: { email: { type: 'string' }, token: { type: 'string' } },
              username: '{{credentials.email}}',
              password: '{{credentials.token}}',
            },
          ]),
      ),
      'auth.0.fields.token',
      /must be declared secret: true/,
    ],
    [
      'basic auth reading an undeclared field',
      mutate((m) => (m.auth = [{ name: 'basic', type: 'basic', fields: { email: { type: 'string' } }, username: '{{credentials.user}}', password: 'x' }])),
      'auth.0.username',
      /"credentials.user" is not a credential field/,
    ],
    [
      'basic auth without a password',
      mutate((m) => (m.auth = [{ name: 'basic', type: 'basic', fields: { email: { type: 'string' } }, username: '{{credentials.email}}' }])),
      'auth.0',
      /missing required key "password"/,
    ],
    [
      'base URL variable from config without a pattern',
      mutate((m) => {
        m.config = { ...(m.config ?? {}), subdomain: { type: 'string' } };
        m.base_url.default = 'https://{{config.subdomain}}.example.com';
      }),
      'config.subdomain',
      /needs a pattern \(or enum\)/,
    ],
    [
      'base URL variable from a credential without a pattern',
      mutate((m) => (m.base_url.default = 'https://{{credentials.api_key}}.example.com')),
      'base_url.default',
      /its field needs a pattern|is secret/,
    ],
    [
      'base URL variable that is the whole host',
      mutate((m) => {
        m.config = { ...(m.config ?? {}), host: { type: 'string', pattern: '[a-z]+' } };
        m.base_url.default = 'https://{{config.host}}/v1';
      }),
      'base_url.default',
      /one label of the host/,
    ],
    [
      'base URL variable from params',
      mutate((m) => (m.base_url.default = 'https://{{params.x}}.example.com')),
      'base_url.default',
      /unknown variable "params.x"/,
    ],
    [
      'config pattern that is not a regular expression',
      mutate((m) => (m.config = { ...(m.config ?? {}), site: { type: 'string', pattern: '([a-z' } })),
      'config.site.pattern',
      /invalid regular expression/,
    ],
    [
      'unknown call value',
      mutate((m) => (m.entities.notes.actions.list.request.query.k = '{{call.key}}')),
      'entities.notes.actions.list.request.query.k',
      /"call.key" is not a call value \(call.id is\)/,
    ],
    [
      'call value in a response',
      mutate((m) => (m.entities.notes.actions.list.response.records = '{{call.id}}')),
      'entities.notes.actions.list.response.records',
      /unknown variable "call.id"/,
    ],
    [
      'next_url on a POST',
      mutate((m) =>
        Object.assign(m.entities.notes.actions.list, {
          request: { ...m.entities.notes.actions.list.request, method: 'POST' },
          pagination: { type: 'next_url', next: '{{body.links.next}}' },
        }),
      ),
      'entities.notes.actions.list.pagination.type',
      /follows the URL of the next page with GET/,
    ],
    [
      'next_url without next',
      mutate((m) => (m.entities.notes.actions.list.pagination = { type: 'next_url' })),
      'entities.notes.actions.list.pagination',
      /missing required key "next"/,
    ],
    [
      'retry header in an unknown format',
      mutate((m) => (m.retry = { retry_after_headers: [{ name: 'X-Reset', format: 'unix_minutes' }] })),
      'retry.retry_after_headers.0.format',
      /must be one of|seconds, unix_seconds, unix_ms, http_date/,
    ],
    [
      'form body on a GET',
      mutate((m) => (m.entities.notes.actions.list.request.body_encoding = 'form')),
      'entities.notes.actions.list.request.body_encoding',
      /a GET request carries no body/,
    ],
    [
      'form encoding without a body',
      mutate((m) => (m.entities.notes.actions.list.request.body_encoding = 'form')),
      'entities.notes.actions.list.request.body_encoding',
      /body_encoding: form needs a body/,
    ],
    [
      'form body that is a list',
      mutate((m) => Object.assign(m.entities.notes.actions.list.request, { method: 'POST', body_encoding: 'form', body: ['{{params.cursor}}'] })),
      'entities.notes.actions.list.request.body',
      /a form body must be an object/,
    ],
    [
      'unknown body encoding',
      mutate((m) => (m.entities.notes.actions.list.request.body_encoding = 'xml')),
      'entities.notes.actions.list.request.body_encoding',
      /must be one of: "json", "form"/,
    ],
    [
      'follow_up URL on a host the manifest does not name',
      withFollowUp((f) => (f.request.url = 'https://collector.example.net/resources')),
      'auth.1.follow_up.0.request.url',
      /must be on a host of this manifest \(auth\.example\.com, .*api\.granola\.ai/,
    ],
    [
      'follow_up URL with a variable',
      withFollowUp((f) => (f.request.url = 'https://auth.example.com/{{credentials.site_id}}')),
      'auth.1.follow_up.0.request.url',
      /may not hold variables/,
    ],
    ['follow_up URL over plain http', withFollowUp((f) => (f.request.url = 'http://auth.example.com/resources')), 'auth.1.follow_up.0.request.url', /pattern/],
    [
      'follow_up filling an undeclared field',
      withFollowUp((f) => (f.fields = { site: '{{body.0.id}}' })),
      'auth.1.follow_up.0.fields.site',
      /"site" is not a credential field of this variant \(fields: access_token, site_id, webhook_key\)/,
    ],
    [
      'follow_up filling a secret field',
      withFollowUp((f) => (f.fields = { webhook_key: '{{body.key}}' })),
      'auth.1.follow_up.0.fields.webhook_key',
      /is secret: only non-secret fields are filled this way/,
    ],
    [
      'follow_up filling the access token',
      withFollowUp((f) => (f.fields = { access_token: '{{body.token}}' })),
      'auth.1.follow_up.0.fields.access_token',
      /is secret: only non-secret fields are filled this way/,
    ],
    [
      'follow_up field reading credentials',
      withFollowUp((f) => (f.fields = { site_id: '{{credentials.access_token}}' })),
      'auth.1.follow_up.0.fields.site_id',
      /unknown variable "credentials.access_token": templates here may use body\.\*, headers\.\*/,
    ],
    [
      'follow_up header reading an undeclared field',
      withFollowUp((f) => (f.request.headers = { Authorization: 'Bearer {{credentials.token}}' })),
      'auth.1.follow_up.0.request.headers.Authorization',
      /"credentials.token" is not a credential field/,
    ],
    ['follow_up without fields', withFollowUp((f) => delete f.fields), 'auth.1.follow_up.0', /missing required key "fields"/],
    [
      'token_fields filling a secret field',
      withFollowUp((f) => (f.fields = { site_id: '{{body.0.id}}' }), { webhook_key: '{{body.key}}' }),
      'auth.1.token_fields.webhook_key',
      /is secret: only non-secret fields are filled this way/,
    ],
    [
      'token_fields reading the credentials',
      withFollowUp((f) => (f.fields = { site_id: '{{body.0.id}}' }), { site_id: '{{credentials.access_token}}' }),
      'auth.1.token_fields.site_id',
      /unknown variable "credentials.access_token": templates here may use body\.\*/,
    ],
    [
      'token_fields and a follow_up filling one field',
      withFollowUp(() => undefined, { site_id: '{{body.site}}' }),
      'auth.1.token_fields.site_id',
      /"site_id" is filled by a follow_up too/,
    ],
    ['follow_up on a variant that is not oauth2', mutate((m) => (m.auth[0].follow_up = [FOLLOW_UP()])), 'auth.0', /unknown key "follow_up"|follow_up/],
  ];

  it.each(cases)('rejects: %s', (_name, text, location, message) => {
    const found = problems(text);
    expect(found.length).toBeGreaterThan(0);
    const match = found.find((p) => p.includes(location) && message.test(p));
    expect(match, `problems were:\n${found.join('\n')}`).toBeDefined();
    // Every problem names the file.
    for (const p of found) expect(p.startsWith('test.yaml')).toBe(true);
  });

  it('the worked example in docs/manifest.md is a valid manifest', () => {
    const doc = readFileSync('docs/manifest.md', 'utf8');
    const example = doc.split('```yaml\n')[1]?.split('```')[0] ?? '';
    expect(example).toContain('type: granola');
    expect(problems(example)).toEqual([]);
  });

  it("retry headers may be read as epoch milliseconds (unix_ms, Linear's X-RateLimit-Requests-Reset)", () => {
    const m = loadManifestText(
      mutate((x) => (x.retry = { retry_after_headers: [{ name: 'X-RateLimit-Requests-Reset', format: 'unix_ms' }] })),
      'test.yaml',
    );
    expect(m.manifest.retry?.retry_after_headers).toEqual([{ name: 'X-RateLimit-Requests-Reset', format: 'unix_ms' }]);
  });

  it('reports line and column of the offending node', () => {
    const text = mutate((m) => (m.entities.notes.actions.get.request.path = '/v1/notes/{{params.id}}'));
    const line = text.split('\n').findIndex((l) => l.includes('/v1/notes/{{params.id}}')) + 1;
    const found = problems(text);
    expect(found.some((p) => p.startsWith(`test.yaml:${line}:`))).toBe(true);
  });

  it('reports every problem at once', () => {
    const text = mutate((m) => {
      m.entities.notes.actions.list.request.query.x = '{{params.nope}}';
      m.auth[0].token = '{{credentials.token}}';
      m.entities.notes.primary_key = 'uuid';
    });
    expect(problems(text)).toHaveLength(3);
  });
});
