/**
 * Google service accounts (connectors/_shared/google.yaml's `service_account`, a minted_bearer
 * variant): every Google connector signs an RS256 JWT {iss: client_email, sub: the delegated user,
 * scope: its own scopes, aud: the token URI} with the key's private key, trades it at the token
 * endpoint for an access token (the JWT bearer grant, the JWT as the form's assertion), and calls
 * the API with that token; against each connector's simulator, whose `jwt_tokens` serve the grant.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const CLIENT_EMAIL = 'sync-bot@northwind-prod.iam.gserviceaccount.com';
const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (k: typeof key.privateKey): string => k.export({ type: 'pkcs8', format: 'pem' }).toString();
const SCOPES: Record<string, string> = {
  gmail: 'https://www.googleapis.com/auth/gmail.modify',
  google_calendar: 'https://www.googleapis.com/auth/calendar',
  google_drive: 'https://www.googleapis.com/auth/drive',
  google_sheets: 'https://www.googleapis.com/auth/spreadsheets',
};

describe.each(Object.keys(SCOPES))('%s with a service account', (type) => {
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    const m = getConnector(type);
    sim = await startOpenApiSimulator({
      description: `connectors/${type}/${m.manifest.vendor_description!.path}`,
      sidecar: loadSidecar(`connectors/${type}/simulator.yaml`),
      seed: 2,
      rateLimit: false,
      jwtKeys: { [CLIENT_EMAIL]: key.publicKey },
    });
  });
  afterAll(() => sim.close());

  const runtime = (credentials: Rec) => new ConnectorRuntime(getConnector(type), credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });
  /** One API call: the connector's credential check, or (Sheets has none) a seeded spreadsheet's get. */
  const touch = async (rt: ConnectorRuntime): Promise<void> => {
    if (getConnector(type).check !== undefined) await rt.check();
    else await rt.execute('spreadsheets', 'get', { spreadsheet_id: [...sim.resources.get('spreadsheets')!.records.keys()][0] });
  };

  it('mints a token with the JWT bearer grant (delegated to the subject, with its scopes) and calls the API with it', async () => {
    const rt = runtime({ client_email: CLIENT_EMAIL, private_key: pem(key.privateKey), subject: 'ada@northwind.example' });
    expect(rt.authVariant).toBe('service_account');
    const first = sim.requests.length;
    await touch(rt);
    const [mint, call] = sim.requests.slice(first);
    expect(mint).toMatchObject({ method: 'POST', path: '/token' });
    const form = new URLSearchParams(mint!.rawBody);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const claims = JSON.parse(Buffer.from(form.get('assertion')!.split('.')[1]!, 'base64url').toString('utf8')) as Rec;
    expect(claims).toMatchObject({ iss: CLIENT_EMAIL, sub: 'ada@northwind.example', scope: SCOPES[type], aud: 'https://oauth2.googleapis.com/token' });
    expect((claims['exp'] as number) - (claims['iat'] as number)).toBeLessThanOrEqual(3660);
    expect(call!.headers['authorization']).toMatch(/^Bearer ya29\.c\./);
  });

  it('without a subject the service account acts as itself; a key Google does not know is refused at the grant', async () => {
    const first = sim.requests.length;
    const rt = runtime({ client_email: CLIENT_EMAIL, private_key: pem(key.privateKey) });
    await touch(rt);
    const claims = JSON.parse(
      Buffer.from(new URLSearchParams(sim.requests[first]!.rawBody).get('assertion')!.split('.')[1]!, 'base64url').toString('utf8'),
    ) as Rec;
    expect(claims).not.toHaveProperty('sub');
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const err = await failure(touch(runtime({ client_email: CLIENT_EMAIL, private_key: pem(stranger), subject: 'ada@northwind.example' })));
    expect(err.code).toBe('upstream_credentials_rejected');
  });
});
