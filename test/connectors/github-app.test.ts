/**
 * GitHub's `app` auth variant (minted_bearer) end to end: the interpreter signs the app's JWT
 * with a throwaway RSA key generated here, mints an installation token from the generic
 * simulator (the sidecar's jwt_tokens, verifying the JWT with the matching public key registered
 * by app id), and runs every entity's actions with the minted token. No key is committed.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;
const DESCRIPTION = new URL('../../connectors/github/openapi.json', import.meta.url).pathname;
const SIDECAR = new URL('../../connectors/github/simulator.yaml', import.meta.url).pathname;
const APP_ID = '123456';
const INSTALLATION_ID = '987';
const MINT_PATH = `/app/installations/${INSTALLATION_ID}/access_tokens`;

const pair = (): { privateKey: KeyObject; publicKey: KeyObject } => generateKeyPairSync('rsa', { modulusLength: 2048 });
const { privateKey, publicKey } = pair();
// GitHub hands out PKCS#1 PEMs (-----BEGIN RSA PRIVATE KEY-----).
const PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: SIDECAR, seed: 5, jwtKeys: { [APP_ID]: publicKey } });
  sim.setRateLimit(false);
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const credentials = (over: Rec = {}): Rec => ({ app_id: APP_ID, installation_id: INSTALLATION_ID, private_key: PEM, ...over });
const app = (over: Rec = {}) => connect('github', { credentials: credentials(over) as never, baseUrl: sim.url, retry: { baseDelayMs: 5 } });
type Gh = ReturnType<typeof app>;
const run = (gh: Gh, entity: string, action: string, params?: Rec) =>
  gh.execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const mints = () => sim.requests.filter((r) => r.path === MINT_PATH);

describe('GitHub App (auth variant app): installation tokens minted from the app JWT', () => {
  it('is chosen from the credentials; the check mints once, then lists one repository with the minted token', async () => {
    const gh = app();
    expect(gh.authVariant).toBe('app');
    expect(await gh.check()).toMatchObject({ ok: true, checked: true, info: { repositories: expect.any(Number) } });
    expect(sim.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${MINT_PATH}`, 'GET /installation/repositories']);
    const [mint, check] = sim.requests;
    // The mint carries the JWT: header {alg: RS256}, iss the app id, iat 60 s back, exp 9 minutes ahead.
    const jwt = /^Bearer (.+)$/.exec(String(mint?.headers.authorization))?.[1] ?? '';
    const [h, p] = jwt
      .split('.')
      .slice(0, 2)
      .map((s) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as Rec);
    expect(h).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(p).toMatchObject({ iss: APP_ID });
    expect((p?.exp as number) - (p?.iat as number)).toBe(600);
    expect(mint?.headers['x-github-api-version']).toBe('2022-11-28');
    // The API call carries the minted installation token, never the JWT or the key.
    expect(check?.headers.authorization).toMatch(/^Bearer ghs_/);
    expect(sim.tokens.has(String(check?.headers.authorization).slice(7))).toBe(true);
  });

  it('issues: create, get, update and list with the minted token, minting only once', async () => {
    // Create the repository with the sandbox PAT: an installation reads the repositories it is given.
    const pat = connect('github', { credentials: { token: 'ghp_sandbox_token' }, baseUrl: sim.url });
    const repo = (await pat.execute('repositories', 'create', { name: 'app-repo' } as never)).data as unknown as Rec;
    const owner = (repo.owner as Rec).login as string;
    const gh = app();
    const created = (await run(gh, 'issues', 'create', { owner, repo: 'app-repo', title: 'From the app' })).data as unknown as Rec;
    expect(created).toMatchObject({ title: 'From the app' });
    const number = created.number as number;
    expect(((await run(gh, 'issues', 'get', { owner, repo: 'app-repo', issue_number: number })).data as unknown as Rec).id).toBe(created.id);
    expect(((await run(gh, 'issues', 'update', { owner, repo: 'app-repo', issue_number: number, state: 'closed' })).data as unknown as Rec).state).toBe(
      'closed',
    );
    expect(((await run(gh, 'issues', 'list', { owner, repo: 'app-repo', state: 'all' })).data as unknown as Rec[]).map((i) => i.id)).toContain(created.id);
    const comment = (await run(gh, 'issue_comments', 'create', { owner, repo: 'app-repo', issue_number: number, body: 'Done' })).data as unknown as Rec;
    expect(((await run(gh, 'issue_comments', 'get', { owner, repo: 'app-repo', comment_id: comment.id })).data as unknown as Rec).body).toBe('Done');
    expect(((await run(gh, 'pull_requests', 'list', { owner, repo: 'app-repo', state: 'all' })).data as unknown[]).length).toBeGreaterThanOrEqual(0);
    expect(((await run(gh, 'repositories', 'get', { owner, repo: 'app-repo' })).data as unknown as Rec).id).toBe(repo.id);
    expect(mints()).toHaveLength(1);
    const used = new Set(
      sim.requests.filter((r) => r.path !== MINT_PATH && r.headers.authorization !== 'Bearer ghp_sandbox_token').map((r) => r.headers.authorization),
    );
    expect(used.size).toBe(1);
  });

  it('a revoked installation token is minted again once after the 401, and the call succeeds', async () => {
    const gh = app();
    await gh.check();
    for (const t of [...sim.tokens]) if (t.startsWith('ghs_') && t !== 'ghs_sandbox_installation_token') sim.tokens.delete(t);
    expect((await gh.execute('repositories', 'list', {})).data.length).toBeGreaterThan(0);
    expect(mints()).toHaveLength(2);
  });

  it('a JWT signed by another key is upstream_credentials_rejected at the mint; nothing else is sent', async () => {
    const other = pair().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const err = await failure(app({ private_key: other }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toContain('refused the JWT of auth variant app');
    expect(err.details).toMatchObject({ upstream_status: 401, stage: 'mint' });
    expect(sim.requests.map((r) => r.path)).toEqual([MINT_PATH]);
    expect((await failure(app({ app_id: '999' }).check())).code).toBe('upstream_credentials_rejected');
  });

  it('a private key that is not a PEM is invalid_credentials before anything is sent, without quoting it', async () => {
    const err = await failure(app({ private_key: 'not-a-key-secret-material' }).check());
    expect(err.code).toBe('invalid_credentials');
    expect(err.errors).toEqual([{ path: '/private_key', message: 'is not a PEM private key' }]);
    expect(JSON.stringify(err)).not.toContain('secret-material');
    expect(sim.requests).toHaveLength(0);
    // The installation id is part of the mint path: its pattern keeps it one number.
    expect((await failure(Promise.resolve().then(() => app({ installation_id: '../x' })))).code).toBe('invalid_credentials');
  });
});
