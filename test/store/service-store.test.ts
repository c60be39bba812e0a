/**
 * The service store on SQLite and PostgreSQL: migrations are idempotent, single-use records
 * are consumed exactly once under concurrency, keyset listing, conditional credential updates.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrate, openDatabase, SERVICE_MIGRATIONS, ServiceStore, type Database, type ServiceTables } from '../../src/store/index.ts';
import { describeEachDialect, freshDatabase, type TestDatabase } from '../service/helpers.ts';

describeEachDialect('service store on %s', (dialect) => {
  let tdb: TestDatabase;
  let database: Database<ServiceTables>;
  let store: ServiceStore;
  let orgId: string;

  beforeAll(async () => {
    tdb = await freshDatabase(dialect);
    database = openDatabase<ServiceTables>(tdb.url, tdb.schema !== undefined ? { schema: tdb.schema } : {});
    await migrate(database as Database, [SERVICE_MIGRATIONS]);
    await migrate(database as Database, [SERVICE_MIGRATIONS]); // a second start applies nothing
    store = new ServiceStore(database.db);
    orgId = (await store.ensureOrganization('org', crypto.randomUUID(), new Date().toISOString())).organization.id;
  });
  afterAll(async () => {
    await database?.close();
    await tdb?.drop();
  });

  it('creates an organization once, by name', async () => {
    const again = await store.ensureOrganization('org', crypto.randomUUID(), new Date().toISOString());
    expect(again).toEqual({ organization: expect.objectContaining({ id: orgId }), created: false });
  });

  it('consumes an OAuth state exactly once among concurrent consumers, and never after expiry', async () => {
    const now = new Date();
    const row = (hash: string, expires: Date) => ({
      state_hash: hash,
      organization_id: orgId,
      application_id: 'app',
      customer_name: 'c',
      connector_type: 'acme',
      redirect_url: 'https://x',
      credentials: null,
      expires_at: expires.toISOString(),
      used_at: null,
      created_at: now.toISOString(),
    });
    await store.insertOAuthState(row('s1', new Date(now.getTime() + 60_000)));
    // A second connection pool (another instance) races this one.
    const other = openDatabase<ServiceTables>(tdb.url, tdb.schema !== undefined ? { schema: tdb.schema } : {});
    try {
      const otherStore = new ServiceStore(other.db);
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : otherStore).consumeOAuthState('s1', now.toISOString())));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    } finally {
      await other.close();
    }
    await store.insertOAuthState(row('s2', new Date(now.getTime() - 1)));
    expect(await store.consumeOAuthState('s2', now.toISOString())).toBeUndefined();
  });

  it('consumes a pending secret only for its organization, type and customer', async () => {
    const now = new Date().toISOString();
    const later = new Date(Date.now() + 60_000).toISOString();
    await store.insertOAuthSecret({
      id_hash: 'h1',
      organization_id: orgId,
      customer_name: 'c',
      connector_type: 'acme',
      auth_variant: 'oauth',
      key_id: 'k',
      ciphertext: 'x',
      expires_at: later,
      used_at: null,
      created_at: now,
    });
    const q = { idHash: 'h1', organizationId: orgId, connectorType: 'acme', customerName: 'c' };
    expect(await store.consumeOAuthSecret({ ...q, organizationId: crypto.randomUUID() }, now)).toBeUndefined();
    expect(await store.consumeOAuthSecret({ ...q, connectorType: 'monday' }, now)).toBeUndefined();
    expect(await store.consumeOAuthSecret(q, now)).toMatchObject({ id_hash: 'h1', ciphertext: 'x' });
    expect(await store.consumeOAuthSecret(q, now)).toBeUndefined();
    await store.wipeOAuthSecret('h1');
    const wiped = await database.db.selectFrom('oauth_secrets').select('ciphertext').where('id_hash', '=', 'h1').executeTakeFirstOrThrow();
    expect(wiped.ciphertext).toBe('');
  });

  it('lists connectors by keyset and replaces credentials only over the expected ciphertext', async () => {
    const ts = '2026-01-01T00:00:00.000Z';
    const ids = ['00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
    for (const id of ids) {
      await store.insertConnector({
        id,
        organization_id: orgId,
        customer_name: 'k',
        connector_type: 'granola',
        name: id,
        auth_variant: 'api_key',
        credentials_key_id: 'k',
        credentials_ciphertext: `c-${id}`,
        created_at: ts,
        updated_at: ts,
      });
    }
    const first = await store.listConnectors(orgId, { customerName: 'k', limit: 2 });
    expect(first.map((r) => r.id)).toEqual([ids[1], ids[2]]);
    const rest = await store.listConnectors(orgId, { customerName: 'k', limit: 2, after: { createdAt: ts, id: ids[2] as string } });
    expect(rest.map((r) => r.id)).toEqual([ids[0]]);
    const id = ids[0] as string;
    expect(await store.replaceCredentials(id, 'stale', { keyId: 'k', ciphertext: 'new' }, ts)).toBe(false);
    expect(await store.replaceCredentials(id, `c-${id}`, { keyId: 'k', ciphertext: 'new' }, ts)).toBe(true);
    expect((await store.getConnector(orgId, id))?.credentials_ciphertext).toBe('new');
    expect(await store.getConnector(crypto.randomUUID(), id)).toBeUndefined();
    expect(await store.deleteConnector(orgId, id)).toBe(true);
    expect(await store.deleteConnector(orgId, id)).toBe(false);
  });
});
