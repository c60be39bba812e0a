/**
 * `switchboard init --from-openapi` inferences on small descriptions of our own (see init-openapi.test.ts):
 * pagination styles, searches and queries that list, nested envelopes, item paths, params, headers.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scaffoldFromOpenApi } from '../../src/factory/init-openapi.ts';
import { startOpenApiSimulator } from '../../src/simulator/index.ts';
import { description, ok, scaffold, widget, widgetPaths, type Rec } from './init-openapi-helpers.ts';

describe('init --from-openapi inferences', () => {
  it('pagination: an integer offset with a limit', async () => {
    const list = {
      parameters: [
        { name: 'offset', in: 'query', schema: { type: 'integer' } },
        { name: 'limit', in: 'query', schema: { type: 'integer', default: 25, maximum: 100 } },
      ],
      ...ok({ type: 'object', properties: { results: { type: 'array', items: widget }, total: { type: 'integer' } } }),
    };
    const { m } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['entities'].widgets.actions.list.pagination).toEqual({ type: 'offset', param: 'offset', limit_param: 'limit', default_limit: 25 });
    expect(m['entities'].widgets.actions.list.response.records).toBe('{{body.results}}');
  });

  it('a POST search beside the item path is the list (Apollo-shaped): body params, page numbers while page < total_pages, no check from it', async () => {
    const search = {
      requestBody: {
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { q_keywords: { type: 'string' }, page: { type: 'integer' }, per_page: { type: 'integer', default: 10, maximum: 100 } },
            },
          },
        },
      },
      ...ok({
        type: 'object',
        properties: {
          widgets: { type: 'array', items: widget },
          pagination: { type: 'object', properties: { page: { type: 'integer' }, per_page: { type: 'integer' }, total_pages: { type: 'integer' } } },
        },
      }),
    };
    const paths = {
      '/widgets': { post: { requestBody: { content: { 'application/json': { schema: widget } } }, ...ok({ type: 'object', properties: { widget } }) } },
      '/widgets/search': { post: search },
      '/widgets/{widget_id}': widgetPaths({})['/widgets/{widget_id}'],
    };
    const { m } = await scaffold(description({ paths }));
    const l = m['entities'].widgets.actions.list;
    expect(l.request).toEqual({
      method: 'POST',
      path: '/widgets/search',
      body: { q_keywords: '{{params.q_keywords}}', page: '{{params.page}}', per_page: '{{params.per_page}}' },
    });
    expect(l.pagination).toEqual({
      type: 'page',
      param: 'page',
      start: 1,
      limit_param: 'per_page',
      default_limit: 10,
      has_more: '{{lt body.pagination.page body.pagination.total_pages}}',
    });
    expect(Object.keys(m['entities'].widgets.actions).sort()).toEqual(['create', 'get', 'list']);
    expect(m['check']).toBeUndefined();
  });

  it('envelopes nested under one-key wrappers (FreshBooks-shaped {response: {result: ...}}) are looked into; {page, pages} pages by number', async () => {
    const wrapped = (result: Rec): Rec => ({
      type: 'object',
      properties: { response: { type: 'object', properties: { result: { type: 'object', properties: result } } } },
    });
    const idParam = { name: 'widget_id', in: 'path', required: true, schema: { type: 'integer' } };
    const paths = {
      '/widgets': {
        get: {
          parameters: [
            { name: 'page', in: 'query', schema: { type: 'integer' } },
            { name: 'per_page', in: 'query', schema: { type: 'integer', maximum: 100 } },
          ],
          ...ok(wrapped({ widgets: { type: 'array', items: widget }, page: { type: 'integer' }, pages: { type: 'integer' }, total: { type: 'integer' } })),
        },
      },
      '/widgets/{widget_id}': { get: { parameters: [idParam], ...ok(wrapped({ widget })) } },
    };
    const { m } = await scaffold(description({ paths }));
    const { list, get } = m['entities'].widgets.actions;
    expect(list.response.records).toBe('{{body.response.result.widgets}}');
    expect(list.pagination.has_more).toBe('{{lt body.response.result.page body.response.result.pages}}');
    expect(get.response.record).toBe('{{body.response.result.widget}}');
    expect(m['entities'].widgets.primary_key).toBe('id');
  });

  it('a POST query beside the item path is the list too (Attio-shaped): limit and offset in the body page it by offset', async () => {
    const query = {
      requestBody: {
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: { filter: { type: 'object' }, limit: { type: 'integer', default: 500, maximum: 500 }, offset: { type: 'integer', minimum: 0 } },
            },
          },
        },
      },
      ...ok({ type: 'object', properties: { data: { type: 'array', items: widget } } }),
    };
    const paths = { '/widgets/query': { post: query }, '/widgets/{widget_id}': widgetPaths({})['/widgets/{widget_id}'] };
    const { m } = await scaffold(description({ paths }));
    const l = m['entities'].widgets.actions.list;
    expect(l.request).toMatchObject({ method: 'POST', path: '/widgets/query', body: { limit: '{{params.limit}}', offset: '{{params.offset}}' } });
    expect(l.pagination).toEqual({ type: 'offset', param: 'offset', limit_param: 'limit', default_limit: 500 });
  });

  it('pagination: an integer offset with a limit and has_more (Close-shaped _skip/_limit)', async () => {
    const list = {
      parameters: [
        { name: '_skip', in: 'query', schema: { type: 'integer' } },
        { name: '_limit', in: 'query', schema: { type: 'integer', default: 100, maximum: 200 } },
      ],
      ...ok({ type: 'object', properties: { has_more: { type: 'boolean' }, data: { type: 'array', items: widget } } }),
    };
    const { m } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['entities'].widgets.actions.list.pagination).toEqual({
      type: 'offset',
      param: 'skip',
      limit_param: 'limit',
      default_limit: 100,
      has_more: '{{body.has_more}}',
    });
  });

  it('pagination: page numbers with a has_more field', async () => {
    const list = {
      parameters: [
        { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1 } },
        { name: 'per_page', in: 'query', schema: { type: 'integer', maximum: 50 } },
      ],
      ...ok({ type: 'object', properties: { items: { type: 'array', items: widget }, has_more: { type: 'boolean' } } }),
    };
    const { m } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['entities'].widgets.actions.list.pagination).toEqual({
      type: 'page',
      param: 'page',
      start: 1,
      limit_param: 'per_page',
      default_limit: 20,
      has_more: '{{body.has_more}}',
    });
  });

  it('pagination: a cursor param and the response field carrying the next one', async () => {
    const list = {
      parameters: [{ name: 'cursor', in: 'query', schema: { type: 'string' } }],
      ...ok({
        type: 'object',
        properties: { data: { type: 'array', items: widget }, meta: { type: 'object', properties: { next_cursor: { type: 'string', nullable: true } } } },
      }),
    };
    const { m } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['entities'].widgets.actions.list.pagination).toEqual({ type: 'cursor', param: 'cursor', next: '{{body.meta.next_cursor}}' });
    expect(m['entities'].widgets.actions.list.response.meta).toEqual({ next_page: '{{body.meta.next_cursor}}' });
  });

  it('pagination: a Link header; Retry-After and rate-limit reset headers become retry headers', async () => {
    const list = ok(
      { type: 'array', items: widget },
      { Link: { schema: { type: 'string' } }, 'X-RateLimit-Reset': { schema: { type: 'integer' } }, 'Retry-After': { schema: { type: 'integer' } } },
    );
    const { m } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['entities'].widgets.actions.list.pagination).toEqual({ type: 'link_header' });
    expect(m['retry'].retry_after_headers).toEqual([
      { name: 'X-RateLimit-Reset', format: 'unix_seconds' },
      { name: 'Retry-After', format: 'seconds' },
    ]);
  });

  it('pagination: a declared Link header wins over counting page numbers (GitHub)', async () => {
    const list = {
      parameters: [
        { name: 'page', in: 'query', schema: { type: 'integer' } },
        { name: 'per_page', in: 'query', schema: { type: 'integer' } },
      ],
      ...ok({ type: 'array', items: widget }, { Link: { schema: { type: 'string' } } }),
    };
    const { m, yaml } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['entities'].widgets.actions.list.pagination).toEqual({ type: 'link_header' });
    expect(yaml).toContain('# check: the response declares a Link header (rel="next"), followed rather than counting page');
  });

  it('an item path named by two ids (/repos/{owner}/{repo}) is the item of the collection named like its word (/user/repos)', async () => {
    const repo = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } };
    const ids = ['owner', 'repo'].map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const paths = {
      '/user/repos': {
        get: ok({ type: 'array', items: repo }),
        post: { requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } }, ...ok(repo) },
      },
      '/orgs/{org}/repos': {
        get: { parameters: [{ name: 'org', in: 'path', required: true, schema: { type: 'string' } }], ...ok({ type: 'array', items: repo }) },
      },
      '/repos/{owner}/{repo}': {
        parameters: ids,
        get: ok(repo),
        patch: { requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } }, ...ok(repo) },
      },
    };
    // Two collections end in repos: the one with fewest path params gets the item (names clash, so both are qualified).
    const { m } = await scaffold(description({ paths }));
    expect(Object.keys(m['entities'])).toEqual(['user_repos', 'orgs_repos']);
    expect(Object.keys(m['entities'].orgs_repos.actions)).toEqual(['list']);
    const a = m['entities'].user_repos.actions;
    expect(Object.keys(a)).toEqual(['list', 'get', 'create', 'update']);
    expect(a.list.request.path).toBe('/user/repos');
    expect(a.get.request.path).toBe('/repos/{{params.owner}}/{{params.repo}}');
    expect(a.update.request).toMatchObject({ method: 'PATCH', path: '/repos/{{params.owner}}/{{params.repo}}' });
    expect(a.get.params).toMatchObject({ owner: { type: 'string', required: true }, repo: { type: 'string', required: true } });
  });

  it('the prefix every path shares (/api/v1) names no parent: /api/v1/users stays users beside /api/v1/groups/{id}/users, in init and in the simulator', async () => {
    const user = { type: 'object', properties: { id: { type: 'string' }, status: { type: 'string' } } };
    const p = (...names: string[]) => names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    const paths = {
      '/api/v1/users': { get: ok({ type: 'array', items: user }) },
      '/api/v1/users/{userId}': { parameters: p('userId'), get: ok(user) },
      '/api/v1/groups': { get: ok({ type: 'array', items: user }) },
      '/api/v1/groups/{groupId}': { parameters: p('groupId'), get: ok(user) },
      '/api/v1/groups/{groupId}/users': { parameters: p('groupId'), get: ok({ type: 'array', items: user }) },
      '/api/v1/groups/{groupId}/users/{userId}': { parameters: p('groupId', 'userId'), get: ok(user) },
    };
    const file = description({ paths });
    const { m } = await scaffold(file);
    expect(Object.keys(m['entities']).sort()).toEqual(['groups', 'groups_users', 'users']);
    expect(m['entities'].users.actions.list.request.path).toBe('/api/v1/users');
    const sim = await startOpenApiSimulator({ description: file });
    try {
      expect([...sim.resources.keys()].sort()).toEqual(['groups', 'groups_users', 'users']);
    } finally {
      await sim.close();
    }
  });

  it("same-named nested collections are one entity: the one with items, completed by the other's create", async () => {
    const comment = { type: 'object', properties: { id: { type: 'integer' }, body: { type: 'string' } } };
    const p = (...names: string[]) => names.map((name) => ({ name, in: 'path', required: true, schema: { type: name === 'repo' ? 'string' : 'integer' } }));
    const create = {
      requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['body'], properties: { body: { type: 'string' } } } } } },
      ...ok(comment),
    };
    const paths = {
      '/repos/{repo}/issues/comments': { parameters: p('repo'), get: ok({ type: 'array', items: comment }) },
      '/repos/{repo}/issues/comments/{comment_id}': { parameters: p('repo', 'comment_id'), get: ok(comment), patch: create },
      '/repos/{repo}/issues/{issue_number}/comments': { parameters: p('repo', 'issue_number'), get: ok({ type: 'array', items: comment }), post: create },
    };
    const { m } = await scaffold(description({ paths }));
    expect(Object.keys(m['entities'])).toEqual(['issues_comments']);
    const a = m['entities'].issues_comments.actions;
    expect(a.list.request.path).toBe('/repos/{{params.repo}}/issues/comments');
    expect(a.create.request.path).toBe('/repos/{{params.repo}}/issues/{{params.issue_number}}/comments');
    expect(a.get.request.path).toBe('/repos/{{params.repo}}/issues/comments/{{params.comment_id}}');
  });

  it('params: oneOf of primitive types is a type union; array items keep their fields and required list', async () => {
    const bodySchema = {
      type: 'object',
      required: ['title'],
      properties: {
        title: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
        milestone: { oneOf: [{ type: 'string' }, { type: 'integer' }], nullable: true },
        values: { type: 'array', items: { type: 'object', required: ['field_id'], properties: { field_id: { type: 'integer' }, note: { type: 'string' } } } },
      },
    };
    const paths = widgetPaths(ok({ type: 'array', items: widget }), {
      post: { requestBody: { content: { 'application/json': { schema: bodySchema } } }, ...ok(widget) },
    });
    const { m } = await scaffold(description({ paths }));
    const params = m['entities'].widgets.actions.create.params;
    expect(params.title).toEqual({ type: ['string', 'integer'], required: true });
    expect(params.milestone).toEqual({ type: ['string', 'integer', 'null'] });
    expect(params.values).toEqual({
      type: 'array',
      items: { type: 'object', properties: { field_id: { type: 'integer' }, note: { type: 'string' } }, required: ['field_id'] },
    });
  });

  it('a list with nothing to page by is reported; an unwrapped body keeps its fields at the top', async () => {
    const paths = widgetPaths(ok({ type: 'array', items: widget }), {
      post: {
        requestBody: {
          content: {
            'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, size: { type: 'integer' } } } },
          },
        },
        ...ok(widget),
      },
    });
    const { m, report } = await scaffold(description({ paths }));
    expect(report.join('\n')).toMatch(/widgets\.list \(GET \/widgets\): no pagination inferred/);
    const create = m['entities'].widgets.actions.create;
    expect(create.params.name).toEqual({ type: 'string', required: true });
    expect(create.request.body).toEqual({ name: '{{params.name}}', size: '{{params.size}}' });
    expect(create.response.record).toBe('{{body}}');
  });

  it('a collection path answering one object (GET /me) is a get; an array of strings in a record is not a list', async () => {
    const me = { type: 'object', properties: { id: { type: 'string' }, email: { type: 'string' }, team_ids: { type: 'array', items: { type: 'integer' } } } };
    const { m } = await scaffold(description({ paths: { '/me': { get: ok(me) }, ...widgetPaths(ok({ type: 'array', items: widget })) } }));
    expect(Object.keys(m['entities'].me.actions)).toEqual(['get']);
    expect(m['entities'].me.actions.get.response.record).toBe('{{body}}');
    expect(m['check']).toEqual({ request: { method: 'GET', path: '/me' } });
  });

  it('a header parameter with a default (an API version) is sent on every request, not a param', async () => {
    const list = {
      parameters: [
        { name: 'Acme-Version', in: 'header', schema: { type: 'string', default: '2024-06-01' } },
        { name: 'X-Request-Tag', in: 'header', schema: { type: 'string' } },
      ],
      ...ok({ type: 'array', items: widget }),
    };
    const { m, yaml } = await scaffold(description({ paths: widgetPaths(list) }));
    expect(m['headers']).toEqual({ Accept: 'application/json', 'Acme-Version': '2024-06-01' });
    expect(yaml).toContain("# check: the Acme-Version header parameter's default, sent on every request");
    const action = m['entities'].widgets.actions.list;
    expect(Object.keys(action.params)).toEqual(['x_request_tag']);
    expect(action.request.headers).toEqual({ 'X-Request-Tag': '{{params.x_request_tag}}' });
  });

  it('HubSpot (derived from its generated client): nested body objects keep their shape, maps their value type, the cursor its paging.next.after', async () => {
    const { m } = await scaffold('connectors/hubspot/openapi.yaml', ['contacts']);
    const create = m['entities'].contacts.actions.create;
    // Property values are text, numbers or booleans (HubSpot accepts all three: issue 37 item 14).
    expect(create.params.properties).toEqual({ type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] }, required: true });
    const item = create.params.associations.items;
    expect(item.required).toEqual(['types', 'to']);
    expect(item.properties.to).toEqual({ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] });
    expect(item.properties.types.items.required).toEqual(['associationCategory', 'associationTypeId']);
    expect(item.properties.types.items.properties.associationCategory.enum).toEqual(['HUBSPOT_DEFINED', 'USER_DEFINED', 'INTEGRATOR_DEFINED']);
    expect(m['entities'].contacts.actions.list.pagination).toEqual({ type: 'cursor', param: 'after', next: '{{body.paging.next.after}}' });
    expect(m['entities'].contacts.record.properties.properties).toMatchObject({ additionalProperties: { type: ['string', 'null'] } });
    // The error schema's message is body.message: named once.
    expect(m['errors'].message).toBe('{{default body.message body.error}}');
    expect(m['auth'][0]).toMatchObject({
      type: 'oauth2',
      authorize_url: 'https://app.hubspot.com/oauth/authorize',
      token_url: 'https://api.hubapi.com/oauth/v1/token',
    });
  });

  it('refuses Swagger 2.0 with what to do', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-oas-'));
    writeFileSync(join(dir, 's.json'), JSON.stringify({ swagger: '2.0', info: { title: 'x', version: '1' }, paths: {} }));
    await expect(scaffoldFromOpenApi(join(dir, 's.json'), { type: 'x', descriptionPath: 'x', source: 'x' })).rejects.toThrow(
      /not an OpenAPI 3\.x description \(version 2\.0\); convert Swagger 2\.0/,
    );
  });
});
