/**
 * JSON bodies checked once, in the service's JSON parser, before anything else sees them
 * (issue 21, items 6 and 7): nesting past MAX_JSON_DEPTH is 400 invalid_json_depth (a 20,000-deep
 * body used to overflow the stack of a recursive check: 500 and a stack trace at error level),
 * and a lone surrogate in any string or key is 400 invalid_characters (it used to be stored as
 * invalid UTF-8 by SQLite and as U+FFFD by PostgreSQL). On both databases, on public and
 * authenticated endpoints alike; nothing is stored.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/errors/body-check.ts';
import { describeEachDialect, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

/** `{"a":{"a":...{"a":1}...}}` with `depth` objects. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

describeEachDialect('JSON input hygiene on %s', (dialect) => {
  let h: Harness;
  let token: string;

  beforeAll(async () => {
    h = await startHarness(dialect, { config: { connectorTypes: { granola: { baseUrl: 'http://127.0.0.1:9' } } } });
    token = await h.token(await h.createApp('acme'));
  });
  afterAll(() => h?.close());

  const errorLines = (): string[] => h.logs.filter((l) => l.includes('"level":50'));

  it('a body nested 20,000 deep is 400 invalid_json_depth on every kind of endpoint, with no error-level log', async () => {
    const deep = nested(20_000);
    const deepArray = `{"token":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    const before = await h.snapshot();
    for (const [path, t, body] of [
      ['/api/v1/account/applications/token', undefined, deep],
      ['/connect/session', undefined, deepArray],
      [CONNECTORS, token, deep],
      [`${CONNECTORS}/00000000-0000-4000-8000-000000000000/execute`, token, deep],
      ['/mcp', token, deep],
      ['/api/v1/integrations/connect/sessions', token, deepArray],
    ] as const) {
      const r = await h.request('POST', path, {
        ...(t !== undefined ? { token: t } : {}),
        raw: body,
        headers: { accept: 'application/json, text/event-stream' },
      });
      expect([path, r.status, r.body?.code]).toEqual([path, 400, 'invalid_json_depth']);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
    }
    expect(errorLines()).toEqual([]);
    expect(await h.snapshot()).toBe(before);
  });

  it(`the limit is ${MAX_JSON_DEPTH} levels: one more is refused, the limit itself is parsed`, async () => {
    const over = await h.request('POST', CONNECTORS, { token, raw: nested(MAX_JSON_DEPTH + 1) });
    expect([over.status, over.body.code]).toEqual([400, 'invalid_json_depth']);
    expect(over.body.details).toEqual({ max_depth: MAX_JSON_DEPTH });
    // At the limit the body reaches the schema (which then refuses the unknown field).
    const at = await h.request('POST', CONNECTORS, { token, raw: nested(MAX_JSON_DEPTH) });
    expect([at.status, at.body.code]).toEqual([400, 'invalid_request']);
  });

  it('a lone surrogate in customer_name is 400 invalid_characters naming the field; nothing is stored', async () => {
    const before = await h.snapshot();
    for (const name of ['sur\ud800rogate', 'low\udc00first', 'end\udbff']) {
      const r = await h.request('POST', `${CONNECTORS}?check=false`, {
        token,
        body: { customer_name: name, connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_key' } },
      });
      expect([r.status, r.body.code]).toEqual([400, 'invalid_characters']);
      expect(r.body.errors).toEqual([{ path: '/customer_name', message: expect.stringContaining('lone surrogate') }]);
    }
    expect(await h.snapshot()).toBe(before);
  });

  it('a lone surrogate in an API key (created with ?check=false), a key name or a nested param is refused the same way', async () => {
    const key = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_\ud800_key' } },
    });
    expect([key.status, key.body.code, key.body.errors]).toEqual([
      400,
      'invalid_characters',
      [{ path: '/credentials/api_key', message: expect.stringContaining('lone surrogate') }],
    ]);
    const raw = `{"customer_name":"c","connector_type":"granola","name":"g","credentials":{"api\\udc00key":"k"}}`;
    const k = await h.request('POST', `${CONNECTORS}?check=false`, { token, raw });
    expect([k.status, k.body.code, k.body.errors?.[0]?.path]).toEqual([400, 'invalid_characters', '/credentials/api\udc00key']);
    const session = await h.request('POST', '/api/v1/integrations/connect/sessions', { token, body: { customer_name: 'x\ud800' } });
    expect([session.status, session.body.code]).toEqual([400, 'invalid_characters']);
  });

  it('a pair written as escapes (an emoji) is valid: stored, echoed and found by the same name on both databases', async () => {
    const name = 'emoji \ud83d\ude00 customer';
    const r = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      raw: `{"customer_name":"emoji \\ud83d\\ude00 customer","connector_type":"granola","name":"g","credentials":{"api_key":"grn_key"}}`,
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.customer_name).toBe(name);
    const list = await h.request('GET', `${CONNECTORS}?customer_name=${encodeURIComponent(name)}`, { token });
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([r.body.id]);
  });
});
