import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { describeManifest } from '../../src/manifest/describe.ts';
import { getConnector, loadManifestText, manifestFiles, loadManifestFile } from '../../src/manifest/index.ts';
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

describe('manifest loader: error rules and search without sync', () => {
  const withRule = (rule: Record<string, unknown>, key = 'in_body') => mutate((m) => (m.errors[key] = [rule]));

  it('a match rule loads: a dotted path with * and its values; its templates may read matched', () => {
    const text = withRule({
      match: { path: 'body.errors.*.code', in: ['A', 'B'] },
      code: 'upstream_rejected',
      message: '{{matched.message}}',
      not_executed: true,
    });
    expect(problems(text)).toEqual([]);
    const m = loadManifestText(text, 'test.yaml');
    expect(m.bodyErrors[0]!.test({ body: { errors: [{ code: 'X' }, { code: 'B', message: 'second' }] } })).toEqual({
      matched: { code: 'B', message: 'second' },
    });
    expect(m.bodyErrors[0]!.test({ body: { errors: [{ code: 'X' }] } })).toBeNull();
    expect(m.bodyErrors[0]!.test({ body: { errors: 'B' } })).toBeNull();
    expect(m.bodyErrors[0]!.notExecuted).toBe(true);
  });

  it('on_status rules with status, and a match on status itself', () => {
    const text = withRule({ match: { path: 'status', in: [429] }, status: [429], code: 'upstream_rate_limited' }, 'on_status');
    const m = loadManifestText(text, 'test.yaml');
    expect(m.statusErrors[0]!.test({ status: 429, body: {} })).toEqual({ matched: null });
    expect(m.statusErrors[0]!.test({ status: 503, body: {} })).toBeNull();
  });

  it.each([
    ['both when and match', { when: '{{body.errors}}', match: { path: 'body.x', in: [1] }, code: 'upstream_error' }, /exactly one of when .* or match/],
    ['neither when nor match', { code: 'upstream_error' }, /exactly one of when .* or match/],
    ['a path outside body, headers, status', { match: { path: 'params.x', in: [1] }, code: 'upstream_error' }, /match\.path: must match pattern/],
    ['an empty value list', { match: { path: 'body.x', in: [] }, code: 'upstream_error' }, /match\.in: must NOT have fewer than 1 items/],
    ['matched in a when rule', { when: '{{body.errors}}', code: 'upstream_error', message: '{{matched.message}}' }, /unknown variable "matched\.message"/],
  ])('refuses %s', (_name, rule, want) => {
    expect(problems(withRule(rule)).join('\n')).toMatch(want);
  });

  it('errors.list entries are read with entry', () => {
    expect(problems(mutate((m) => (m.errors.list = { items: '{{body.errors}}', path: '{{entry.field}}', message: '{{entry.message}}' })))).toEqual([]);
    expect(problems(mutate((m) => (m.errors.list = { items: '{{body.errors}}', message: '{{body.message}}' }))).join()).toMatch(
      /unknown variable "body\.message"/,
    );
  });

  it('sync.incremental.format: raw passes the cursor field’s value as it came (Slack’s ts); other names are refused', () => {
    expect(problems(mutate((m) => (m.entities.notes.sync.incremental.format = 'raw')))).toEqual([]);
    expect(problems(mutate((m) => (m.entities.notes.sync.incremental.format = 'verbatim'))).join()).toMatch(
      /entities\.notes\.sync\.incremental\.format.*(iso8601|allowed)/,
    );
  });

  it('sync.removals: checks the source list, its params and that the sync is incremental', () => {
    // Loaded as connectors/monday/connector.yaml: its vendor_description is the file beside it.
    const file = 'connectors/monday/connector.yaml';
    const monday = readFileSync(file, 'utf8');
    const change = (f: (m: Record<string, any>) => void): string => {
      const m = parse(monday) as Record<string, any>;
      f(m);
      return stringify(m);
    };
    expect(problems(monday, file)).toEqual([]);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.entity = 'nope')),
        file,
      ).join(),
    ).toMatch(/"nope" is not an entity with a list action/);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.since_param = 'since')),
        file,
      ).join(),
    ).toMatch(/"since" is not a param of activity_logs\.list/);
    expect(
      problems(
        change((m) => delete m.entities.items.sync.incremental),
        file,
      ).join(),
    ).toMatch(/removals need incremental/);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.id = '{{params.x}}')),
        file,
      ).join(),
    ).toMatch(/unknown variable "params\.x"/);
    // Without since_param the removals list is read whole (HubSpot's archived=true listing); a
    // format other than the four is refused.
    expect(
      problems(
        change((m) => delete m.entities.items.sync.removals.since_param),
        file,
      ),
    ).toEqual([]);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.format = 'unix_ms')),
        file,
      ),
    ).toEqual([]);
    expect(
      problems(
        change((m) => (m.entities.items.sync.removals.format = 'unix_minutes')),
        file,
      ).join(),
    ).toMatch(/format/);
  });

  it('OAuth URLs may name pattern-declared credential fields of their variant, nothing else', () => {
    const file = 'connectors/zendesk/connector.yaml';
    const zendesk = readFileSync(file, 'utf8');
    const change = (f: (m: Record<string, any>) => void): string => {
      const m = parse(zendesk) as Record<string, any>;
      f(m);
      return stringify(m);
    };
    const oauth = (m: Record<string, any>) => m.auth.find((v: { type: string }) => v.type === 'oauth2');
    expect(problems(zendesk, file)).toEqual([]);
    expect(
      problems(
        change((m) => (oauth(m).token_url = 'https://{{credentials.region}}.zendesk.com/oauth/tokens')),
        file,
      ).join(),
    ).toMatch(/auth\.1\.token_url: "credentials\.region" is not a credential field/);
    expect(
      problems(
        change((m) => delete oauth(m).fields.subdomain.pattern),
        file,
      ).join(),
    ).toMatch(/credentials\.subdomain is a variable of the base URL, so its field needs a pattern/);
    expect(
      problems(
        change((m) => (oauth(m).authorize_url = 'https://{{credentials.subdomain}}/oauth')),
        file,
      ).join(),
    ).toMatch(/not the whole host/);
  });

  it('sync.deleted_when: a template over the record only', () => {
    expect(problems(mutate((m) => (m.entities.notes.sync.deleted_when = "{{eq record.status 'deleted'}}")))).toEqual([]);
    expect(problems(mutate((m) => (m.entities.notes.sync.deleted_when = '{{params.page_size}}'))).join()).toMatch(
      /entities\.notes\.sync\.deleted_when: .*unknown variable "params\.page_size"/,
    );
    expect(problems(mutate((m) => (m.entities.notes.sync.deleted_when = '{{#if record.x}'))).join()).toMatch(/entities\.notes\.sync\.deleted_when/);
  });

  it('refuses search fields on an entity without sync, saying why', () => {
    const text = mutate((m) => delete m.entities.notes.sync);
    expect(problems(text)).toEqual([
      expect.stringMatching(
        /entities\.notes\.search: search fields need a sync: search reads only records the hosted service has synced, so without a sync block this entity's search would always return \[\]/,
      ),
    ]);
  });
});

/** The Granola manifest with `logo` set. */
const withLogo = (logo: unknown): string => mutate((m) => (m.logo = logo));

// A manifest's optional `logo`: an https URL or a data:image URI (svg+xml, png, jpeg, gif, webp)
// of at most 16 kB, nothing else (no javascript:, no http:, nothing that could break out of an
// HTML attribute); the shipped connectors each carry one, shown by `describe`.
describe('manifest logo', () => {
  it('takes an https URL or a data:image URI', () => {
    for (const ok of [
      'https://cdn.example.com/granola.svg',
      'data:image/png;base64,iVBORw0KGgo=',
      'data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E',
    ]) {
      expect(problems(withLogo(ok)), ok).toEqual([]);
    }
  });

  it('refuses anything else, naming the field', () => {
    for (const bad of [
      'javascript:alert(1)',
      'http://cdn.example.com/x.png',
      'data:text/html,<script>',
      'https://x.example/a b.png',
      'https://x.example/"onerror="x',
      `data:image/png;base64,${'A'.repeat(17_000)}`,
      42,
    ]) {
      const p = problems(withLogo(bad));
      expect(p.length, String(bad)).toBeGreaterThan(0);
      expect(p.join('\n')).toMatch(/logo/);
    }
  });

  it('every shipped connector has one, and describe reports it', () => {
    for (const type of ['granola', 'intercom', 'monday']) {
      const logo = getConnector(type).manifest.logo;
      expect(logo).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(logo!.split(',')[1]!, 'base64').toString()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(describeManifest(getConnector(type)).logo).toBe(logo);
    }
  });
});
