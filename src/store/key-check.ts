/**
 * Start-up check of the key ring against the database: every key id that sealed a stored
 * credential must be in the ring, and the key under each id must decrypt a sample row sealed
 * with it. Otherwise the service refuses to start, saying which id is missing or wrong, instead
 * of reporting healthy and failing every execute and sync.
 */
import type { Kysely } from 'kysely';
import { SwitchboardError } from '../errors/index.ts';
import { missingKeyMessage, type KeyRing } from './encryption.ts';
import type { ServiceTables } from './service-migrations.ts';

/** Key ids of stored connector credentials and pending OAuth secrets. */
export async function storedKeyIds(db: Kysely<ServiceTables>): Promise<string[]> {
  const a = await db.selectFrom('connectors').select('credentials_key_id as id').distinct().execute();
  const b = await db.selectFrom('oauth_secrets').select('key_id as id').distinct().execute();
  return [...new Set([...a, ...b].map((r) => r.id))].sort();
}

/**
 * Throws encryption_key_missing (ids not in the ring) or encryption_key_mismatch (a sample
 * connector sealed with an id does not open with the ring's key of that id). `contextOf` gives
 * the AAD a connector's credentials are bound to.
 */
export async function verifyKeyRing(db: Kysely<ServiceTables>, ring: KeyRing, contextOf: (connectorId: string) => string): Promise<void> {
  const ids = await storedKeyIds(db);
  const missing = ids.filter((id) => !ring.ids.includes(id));
  if (missing.length > 0) {
    throw new SwitchboardError('encryption_key_missing', missingKeyMessage(missing, `the configured key ring has only ${ring.ids.join(', ')}`), {
      details: { missing_key_ids: missing },
    });
  }
  for (const id of ids) {
    const row = await db.selectFrom('connectors').select(['id', 'credentials_ciphertext']).where('credentials_key_id', '=', id).limit(1).executeTakeFirst();
    if (row === undefined) continue;
    try {
      ring.open({ keyId: id, ciphertext: row.credentials_ciphertext }, contextOf(row.id));
    } catch (e) {
      if (e instanceof SwitchboardError && e.code === 'encryption_key_mismatch') {
        throw new SwitchboardError(
          'encryption_key_mismatch',
          `The key configured as "${id}" does not decrypt the credentials sealed with key id "${id}" (connector ${row.id}): configure the key that was used under that id`,
          {
            details: { key_id: id, connector_id: row.id },
          },
        );
      }
      throw e;
    }
  }
}
