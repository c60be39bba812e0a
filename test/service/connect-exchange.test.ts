/**
 * The Connect token exchange takes JSON only (issue 21, item 8): a cross-site HTML form
 * (application/x-www-form-urlencoded, which a browser sends without a CORS preflight) used to
 * get 204 and a SameSite=Lax cookie — a login-CSRF path planting an attacker's session in a
 * victim's browser. It is now 415 unsupported_media_type, sets no cookie and leaves the token
 * unexchanged. On both databases.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, openApiErrors, startHarness, type Harness } from './helpers.ts';

describeEachDialect('Connect token exchange on %s', (dialect) => {
  let h: Harness;
  let token: string;

  beforeAll(async () => {
    h = await startHarness(dialect);
    token = await h.token(await h.createApp('exchange-org'));
  });
  afterAll(() => h?.close());

  const newSession = async (): Promise<string> => {
    const r = await h.request('POST', '/api/v1/integrations/connect/sessions', {
      token,
      body: { customer_name: 'victim', allowed_connector_types: ['granola'] },
    });
    expect(r.status, r.text).toBe(201);
    return r.body.token as string;
  };

  it.each([
    ['an HTML form', 'application/x-www-form-urlencoded', (t: string) => new URLSearchParams({ token: t }).toString()],
    ['multipart', 'multipart/form-data; boundary=x', (t: string) => `--x\r\nContent-Disposition: form-data; name="token"\r\n\r\n${t}\r\n--x--\r\n`],
    ['text/plain holding JSON', 'text/plain', (t: string) => JSON.stringify({ token: t })],
  ])('refuses %s with 415 unsupported_media_type and no cookie; the token stays usable', async (_name, contentType, body) => {
    const t = await newSession();
    const r = await h.request('POST', '/connect/session', { raw: body(t), contentType, headers: { origin: 'https://attacker.example' } });
    expect([r.status, r.body?.code]).toEqual([415, 'unsupported_media_type']);
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(openApiErrors('POST', '/connect/session', r)).toEqual([]);
    // Nothing was exchanged: the page's own JSON request still gets the cookie.
    const ok = await h.request('POST', '/connect/session', { body: { token: t } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('set-cookie')).toMatch(/^sb_connect=/);
  });

  it('takes application/json with a charset parameter', async () => {
    const t = await newSession();
    const r = await h.request('POST', '/connect/session', { body: { token: t }, contentType: 'application/json; charset=utf-8' });
    expect(r.status).toBe(204);
  });
});
