import { describe, expect, it } from 'vitest';
import { compileTemplate, PathValueError, TemplateSyntaxError } from '../../src/templates/index.ts';

describe('templates', () => {
  const ctx = {
    params: { n: 50, s: 'abc', obj: { a: 1 }, arr: [1, 2], t: true, empty: '' },
    body: { items: [{ id: 'x' }], pages: { page: 2, total: 3 }, errors: [{ message: 'boom' }] },
  };

  it.each([
    ['number stays a number', '{{params.n}}', 50],
    ['object stays an object', '{{params.obj}}', { a: 1 }],
    ['array stays an array', '{{params.arr}}', [1, 2]],
    ['boolean stays a boolean', '{{params.t}}', true],
    ['missing value is undefined', '{{params.nope}}', undefined],
    ['missing deep value is undefined', '{{params.nope.deeper}}', undefined],
    ['array index path', '{{body.errors.0.message}}', 'boom'],
    ['helper keeps type', '{{add body.pages.page 1}}', 3],
    ['nested helpers', '{{#if (lt body.pages.page body.pages.total)}}{{add body.pages.page 1}}{{/if}}', '3'],
    ['default skips empty', '{{default params.empty params.s}}', 'abc'],
    ['mixed text renders a string', 'Bearer {{params.s}}', 'Bearer abc'],
    ['objects in mixed text go through json', 'x={{json params.obj}}', 'x={"a":1}'],
    ['no HTML escaping', '{{params.s}}<&>', 'abc<&>'],
    ['cursor round trip', '{{cursor_decode (cursor_encode params.n)}}', 50],
    ['cursor_decode of garbage is undefined', '{{cursor_decode params.s}}', undefined],
    ['omit', '{{omit params "n" "s" "obj" "arr" "t"}}', { empty: '' }],
    ['json helper', '{{json params.arr}}', '[1,2]'],
    ['literal', 'plain', 'plain'],
    ['parse_json + get reads inside a JSON string', `{{get (parse_json '{"a":{"b":[7]}}') 'a' 'b'}}`, [7]],
    ['parse_json of invalid JSON is undefined', '{{parse_json params.s}}', undefined],
    ['get of a missing key is undefined', "{{get params.obj 'zzz'}}", undefined],
    ['get of a non-object is undefined', "{{get params.s 'length'}}", undefined],
  ])('%s', (_name, source, want) => {
    expect(compileTemplate(source).render(ctx)).toEqual(want);
  });

  it('lists root references, skipping block-local names', () => {
    const t = compileTemplate('{{params.a}} {{#each body.items}}{{id}}{{/each}} {{credentials.k}}');
    expect(t.references).toEqual([
      ['params', 'a'],
      ['body', 'items'],
      ['credentials', 'k'],
    ]);
  });

  it.each([
    ['unknown helper', '{{nope params.a}}'],
    ['syntax error', '{{params.a'],
    ['partials', '{{> part}}'],
  ])('rejects %s at compile time', (_n, source) => {
    expect(() => compileTemplate(source)).toThrow(TemplateSyntaxError);
  });

  it('URL-encodes every path expression as one segment', () => {
    const t = compileTemplate('/v1/notes/{{params.id}}/x');
    expect(t.renderPath({ params: { id: 'a/b?c#d%2F{{e}} é' } })).toBe('/v1/notes/a%2Fb%3Fc%23d%252F%7B%7Be%7D%7D%20%C3%A9/x');
  });

  it('keeps commas in a path segment (an id of parts: host,site,web)', () => {
    const t = compileTemplate('/sites/{{params.id}}/lists');
    expect(t.renderPath({ params: { id: 'contoso.sharepoint.com,2c71-04,2d22-fe' } })).toBe('/sites/contoso.sharepoint.com,2c71-04,2d22-fe/lists');
    expect(t.renderPath({ params: { id: 'a,b/c;d' } })).toBe('/sites/a,b%2Fc%3Bd/lists');
  });

  it.each(['', '.', '..'])('refuses the path segment %j', (v) => {
    expect(() => compileTemplate('/v1/{{params.id}}').renderPath({ params: { id: v } })).toThrow(PathValueError);
  });
});

describe('last', () => {
  it('is the last element of an array (Stripe starting_after), undefined otherwise', () => {
    const t = compileTemplate("{{get (last body.data) 'id'}}");
    expect(t.render({ body: { data: [{ id: 'cus_1' }, { id: 'cus_2' }] } })).toBe('cus_2');
    expect(t.render({ body: { data: [] } })).toBeUndefined();
    expect(compileTemplate('{{last body}}').render({ body: 'abc' })).toBeUndefined();
  });
});

describe('merge', () => {
  it('merges objects left to right, later keys winning, skipping non-objects and undefined values', () => {
    const t = compileTemplate("{{merge params.fields (object 'Id' params.id 'SyncToken' params.sync_token 'sparse' true)}}");
    expect(t.render({ params: { fields: { DisplayName: 'Ada', Id: 'x' }, id: '58', sync_token: '2' } })).toEqual({
      DisplayName: 'Ada',
      Id: '58',
      SyncToken: '2',
      sparse: true,
    });
    expect(t.render({ params: { id: '58' } })).toEqual({ Id: '58', sparse: true });
    expect(compileTemplate('{{merge body.a body.list body.b}}').render({ body: { a: { x: 1 }, list: [1], b: 'text' } })).toEqual({ x: 1 });
  });
});

describe('now_iso', () => {
  it('is the current time in ISO 8601 UTC, a default for the end of a window', () => {
    const before = Date.now();
    const v = compileTemplate('{{default params.end (now_iso)}}').render({ params: {} });
    expect(v).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(v as string)).toBeGreaterThanOrEqual(before - (before % 1000));
    expect(compileTemplate('{{default params.end (now_iso)}}').render({ params: { end: '2026-01-01T00:00:00Z' } })).toBe('2026-01-01T00:00:00Z');
  });
});

describe('split', () => {
  it("splits text by a separator (default ','): with last, the id at the end of a URI (Calendly's); anything else is undefined", () => {
    const t = compileTemplate("{{last (split record.uri '/')}}");
    expect(t.render({ record: { uri: 'https://api.calendly.com/users/AAAAAAAAAAAAAAAA' } })).toBe('AAAAAAAAAAAAAAAA');
    expect(compileTemplate('{{split v}}').render({ v: 'a,b' })).toEqual(['a', 'b']);
    expect(compileTemplate("{{split v '/'}}").render({ v: 7 })).toBeUndefined();
    expect(t.render({ record: {} })).toBeUndefined();
  });
});

describe('entries', () => {
  it("is an object's entries as [{key, value}] (Jira's errors by field), undefined for arrays and scalars", () => {
    const t = compileTemplate('{{entries body.errors}}');
    expect(t.render({ body: { errors: { summary: 'You must specify a summary.', project: 'valid project is required' } } })).toEqual([
      { key: 'summary', value: 'You must specify a summary.' },
      { key: 'project', value: 'valid project is required' },
    ]);
    expect(t.render({ body: { errors: {} } })).toEqual([]);
    expect(t.render({ body: { errors: ['a'] } })).toBeUndefined();
    expect(t.render({ body: { errors: 'x' } })).toBeUndefined();
    expect(compileTemplate("{{first (pluck (entries body.errors) 'value')}}").render({ body: { errors: { a: 'first' } } })).toBe('first');
  });

  it('flatten: a list one level flat, [] for an absent list', () => {
    const t = compileTemplate("{{flatten (pluck body.history 'messages')}}");
    expect(t.render({ body: { history: [{ messages: [{ id: 'a' }, { id: 'b' }] }, { id: '2' }, { messages: [{ id: 'c' }] }] } })).toEqual([
      { id: 'a' },
      { id: 'b' },
      { id: 'c' },
    ]);
    expect(t.render({ body: {} })).toEqual([]);
    expect(compileTemplate('{{flatten body.messages}}').render({ body: {} })).toEqual([]);
    expect(compileTemplate('{{flatten body.one}}').render({ body: { one: { id: 'x' } } })).toEqual([{ id: 'x' }]);
    expect(compileTemplate('{{flatten body.l}}').render({ body: { l: [[1, [2]], null, 3] } })).toEqual([1, [2], 3]);
  });

  it('find picks the first object with a field value, concat joins arrays, split cuts a string', () => {
    const accounts = [
      { id: 'a', is_default: false, base_uri: 'https://na2.example.net' },
      { id: 'b', is_default: true, base_uri: 'https://na3.example.net' },
    ];
    expect(compileTemplate("{{get (find body.accounts 'is_default' true) 'id'}}").render({ body: { accounts } })).toBe('b');
    expect(compileTemplate("{{find body.accounts 'is_default' 'yes'}}").render({ body: { accounts } })).toBeUndefined();
    expect(compileTemplate("{{find body.x 'a' 1}}").render({ body: { x: 'not a list' } })).toBeUndefined();
    expect(compileTemplate('{{concat body.a body.b body.c}}').render({ body: { a: [1, 2], b: [[3]], c: 'x' } })).toEqual([1, 2, [3]]);
    const merge = compileTemplate("{{merge (omit params 'extra') params.extra}}");
    expect(merge.render({ params: { Last_Name: 'Burns', Email: 'a@b.c', extra: { Region__c: 'EU', Email: 'x@y.z' } } })).toEqual({
      Last_Name: 'Burns',
      Email: 'x@y.z',
      Region__c: 'EU',
    });
    expect(merge.render({ params: { Last_Name: 'Burns' } })).toEqual({ Last_Name: 'Burns' });
    expect(compileTemplate('{{merge body.a body.b}}').render({ body: { a: 'x', b: [1] } })).toBeUndefined();
    expect(compileTemplate('{{concat body.a body.missing}}').render({ body: { a: [1] } })).toEqual([1]);
    const host = "{{first (split (last (split (get (find body.accounts 'is_default' true) 'base_uri') '//')) '.')}}";
    expect(compileTemplate(host).render({ body: { accounts } })).toBe('na3');
    expect(compileTemplate("{{split body.n '.'}}").render({ body: { n: 3 } })).toBeUndefined();
  });

  it("reject drops the objects with a field value (a change feed's deletions), keeping the rest in order", () => {
    const entries = [
      { '.tag': 'file', id: 'a' },
      { '.tag': 'deleted', name: 'gone' },
      { '.tag': 'folder', id: 'b' },
    ];
    expect(compileTemplate("{{reject body.entries '.tag' 'deleted'}}").render({ body: { entries } })).toEqual([entries[0], entries[2]]);
    expect(compileTemplate("{{reject body.x '.tag' 'deleted'}}").render({ body: { x: 'not a list' } })).toBeUndefined();
  });
});

describe('split and url_host', () => {
  it("read a label of a URL's host (a company's API domain in a token answer), undefined for what is not a URL or string", () => {
    const t = compileTemplate("{{first (split (url_host body.api_domain) '.')}}");
    expect(t.render({ body: { api_domain: 'https://Acme.example.com/' } })).toBe('acme');
    expect(t.render({ body: { api_domain: 'acme.example.com' } })).toBeUndefined();
    expect(t.render({ body: {} })).toBeUndefined();
    expect(compileTemplate('{{split body.s}}').render({ body: { s: 'a,b' } })).toEqual(['a', 'b']);
    expect(compileTemplate("{{split body.s '/'}}").render({ body: { s: 3 } })).toBeUndefined();
  });
});

describe('sub and div', () => {
  it('compute a wait from a cost deficit and a restore rate; undefined for what is not a number or a division by 0', () => {
    const t = compileTemplate('{{div (sub body.requested body.available) body.rate}}');
    expect(t.render({ body: { requested: 152, available: 52, rate: 50 } })).toBe(2);
    expect(t.render({ body: { requested: '75', available: 50, rate: '100' } })).toBe(0.25);
    expect(t.render({ body: { requested: 10, available: 0, rate: 0 } })).toBeUndefined();
    expect(t.render({ body: { requested: 'x', available: 0, rate: 1 } })).toBeUndefined();
    expect(compileTemplate('{{sub 3 body.missing}}').render({ body: {} })).toBeUndefined();
  });
});

describe('helper values inside rendered text', () => {
  it('are handed to enclosing helpers and blocks as values, and printed as JSON', () => {
    const body = [{ id: '1' }, { id: '2' }];
    expect(compileTemplate("{{#if params.limit}}{{get (last body) 'id'}}{{/if}}").render({ body, params: { limit: 2 } })).toBe('2');
    expect(compileTemplate("{{#each (pluck body 'id')}}[{{this}}]{{/each}}").render({ body })).toBe('[1][2]');
    expect(compileTemplate('{{#if (flatten body.none)}}some{{else}}none{{/if}}').render({ body: {} })).toBe('none');
    expect(compileTemplate('last: {{last body}}').render({ body })).toBe('last: {"id":"2"}');
    // A field-errors object as one message (a vendor's {message: {field: [errors]}}).
    const message = "{{#each (entries body.message)}}{{key}} {{join value ', '}}{{#unless @last}}; {{/unless}}{{/each}}";
    expect(compileTemplate(message).render({ body: { message: { name: ['is taken'], path: ['is invalid', 'is reserved'] } } })).toBe(
      'name is taken; path is invalid, is reserved',
    );
  });
});
