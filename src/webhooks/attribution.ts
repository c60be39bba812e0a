/**
 * Which connector a vendor's webhook delivery is for, when the delivery names the vendor's
 * workspace or account (the manifest's `webhooks.attribution.value` and `info`): each connector's
 * key is its credential check's `info.<info>`, learned when its credentials are checked (create,
 * PATCH, POST .../check) and kept in webhook_attributions. A delivery only reads that table: it
 * never runs a check itself, and never scans connectors across organizations.
 *
 * Connectors whose key is not known yet (created without a check, or before this table existed,
 * or whose check failed) are resolved in the background, one pass at a time, at most
 * RESOLVE_BATCH connectors a pass, round-robin across organizations, never-asked connectors
 * first. A failed check is remembered: `failures` in a row and `retry_at`, backing off from
 * RETRY_BASE_MS doubling to RETRY_MAX_MS, so broken connectors cost one check per backoff,
 * not one per delivery. While a connector of the type is still pending (not asked yet, or fewer
 * than PENDING_FAILURES failures) a delivery nobody claims is answered 503
 * webhook_attribution_pending with Retry-After (the vendor retries it), not acknowledged and lost.
 */
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { LoadedManifest } from '../manifest/compile.ts';
import type { WebhooksInTables } from './migrations.ts';

/** Connectors checked per background pass. */
export const RESOLVE_BATCH = 10;
/** The first retry after a failed check; each further failure doubles it, up to RETRY_MAX_MS. */
export const RETRY_BASE_MS = 60_000;
export const RETRY_MAX_MS = 6 * 3_600_000;
/** After this many failures in a row a connector no longer holds unclaimed deliveries back (it is still retried). */
export const PENDING_FAILURES = 3;
/** Candidates read per pass, from which RESOLVE_BATCH are taken round-robin by organization. */
const CANDIDATES = 200;

export interface AttributionOptions {
  db: Kysely<WebhooksInTables>;
  registry: Map<string, LoadedManifest>;
  now: () => number;
  /** A stored connector's credential check info; throws when the check fails. Undefined: the connector is gone. */
  checkInfo: (connectorId: string) => Promise<Record<string, unknown> | undefined>;
  log?: Logger;
}

export type AttributionState = { state: 'known'; key: string | null } | { state: 'pending' };

export class WebhookAttributions {
  #pass: Promise<void> | undefined;
  #again = false;
  #closed = false;
  constructor(private readonly o: AttributionOptions) {}

  /** The check info key a type's connectors are attributed by, when its webhooks name an account. */
  infoKey(type: string): string | undefined {
    return this.o.registry.get(type)?.webhooks?.attribution.info;
  }

  #types(): string[] {
    return [...this.o.registry.values()].filter((m) => m.webhooks?.attribution.info !== undefined).map((m) => m.type);
  }

  /** A passing check's info: the connector's key, remembered (failures forgotten). No-op for types without attribution info. */
  async learned(connectorId: string, type: string, info: Record<string, unknown> | undefined): Promise<void> {
    const k = this.infoKey(type);
    if (k === undefined) return;
    const v = info?.[k];
    const key = v === undefined || v === null || v === '' ? null : String(v);
    const at = new Date(this.o.now()).toISOString();
    await this.o.db
      .insertInto('webhook_attributions')
      .values({ connector_id: connectorId, connector_type: type, attribution_key: key, resolved_at: at, failures: 0, retry_at: null })
      .onConflict((oc) => oc.column('connector_id').doUpdateSet({ attribution_key: key, resolved_at: at, failures: 0, retry_at: null }))
      .execute();
  }

  /** A failed check: remembered with the time of the next try (backoff); a key learned before is kept. */
  async failed(connectorId: string, type: string): Promise<void> {
    if (this.infoKey(type) === undefined) return;
    const row = await this.o.db.selectFrom('webhook_attributions').select(['failures']).where('connector_id', '=', connectorId).executeTakeFirst();
    const failures = Math.max(1, Number(row?.failures ?? 0) + 1);
    const retryAt = new Date(this.o.now() + Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(failures - 1, 20))).toISOString();
    const at = new Date(this.o.now()).toISOString();
    await this.o.db
      .insertInto('webhook_attributions')
      .values({ connector_id: connectorId, connector_type: type, attribution_key: null, resolved_at: at, failures, retry_at: retryAt })
      .onConflict((oc) => oc.column('connector_id').doUpdateSet({ failures, retry_at: retryAt }))
      .execute();
  }

  /** Forget a connector's key (its credentials were replaced unchecked): resolved again in the background. */
  async forget(connectorId: string): Promise<void> {
    await this.o.db.deleteFrom('webhook_attributions').where('connector_id', '=', connectorId).execute();
  }

  /** A connector's key: known (resolved once), or pending (not asked yet, or its checks failed since). */
  async stateOf(connectorId: string): Promise<AttributionState> {
    const row = await this.o.db
      .selectFrom('webhook_attributions')
      .select(['attribution_key', 'failures'])
      .where('connector_id', '=', connectorId)
      .executeTakeFirst();
    if (row === undefined || (Number(row.failures) > 0 && row.attribution_key === null)) return { state: 'pending' };
    return { state: 'known', key: row.attribution_key };
  }

  /** The connectors of a type whose key is `key` (one indexed read). */
  async connectorsWithKey(type: string, key: string): Promise<string[]> {
    const rows = await this.o.db
      .selectFrom('webhook_attributions')
      .innerJoin('connectors', 'connectors.id', 'webhook_attributions.connector_id')
      .select(['webhook_attributions.connector_id as id'])
      .where('webhook_attributions.connector_type', '=', type)
      .where('webhook_attributions.attribution_key', '=', key)
      .where('connectors.status', '<>', 'auth_failed')
      .execute();
    return rows.map((r) => r.id);
  }

  /** Whether a connector of the type may still turn out to claim a delivery: not asked yet, or fewer than PENDING_FAILURES failed checks. */
  async hasPending(type: string): Promise<boolean> {
    const row = await this.o.db
      .selectFrom('connectors')
      .leftJoin('webhook_attributions', 'webhook_attributions.connector_id', 'connectors.id')
      .select('connectors.id')
      .where('connectors.connector_type', '=', type)
      .where('connectors.status', '<>', 'auth_failed')
      .where((eb) =>
        eb.or([
          eb('webhook_attributions.connector_id', 'is', null),
          eb.and([
            eb('webhook_attributions.attribution_key', 'is', null),
            eb('webhook_attributions.failures', '>', 0),
            eb('webhook_attributions.failures', '<', PENDING_FAILURES),
          ]),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Start a background pass (or another after the running one): never awaited by a delivery. */
  resolveSoon(): void {
    if (this.#closed) return;
    if (this.#pass !== undefined) {
      this.#again = true;
      return;
    }
    this.#pass = this.#run().finally(() => {
      this.#pass = undefined;
      if (this.#again) {
        this.#again = false;
        this.resolveSoon();
      }
    });
  }

  /** The running pass (and the one queued after it), settled: for tests and shutdown. */
  async settled(): Promise<void> {
    while (this.#pass !== undefined) await this.#pass;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#again = false;
    await this.settled();
  }

  async #run(): Promise<void> {
    try {
      for (const id of await this.#due()) {
        if (this.#closed) return;
        await this.#resolve(id.id, id.type);
      }
    } catch (e) {
      this.o.log?.warn({ err: e }, 'webhook attribution: background pass failed');
    }
  }

  /** Up to RESOLVE_BATCH connectors due, round-robin by organization, never-asked first. */
  async #due(): Promise<{ id: string; type: string }[]> {
    const types = this.#types();
    if (types.length === 0) return [];
    const now = new Date(this.o.now()).toISOString();
    const rows = await this.o.db
      .selectFrom('connectors')
      .leftJoin('webhook_attributions', 'webhook_attributions.connector_id', 'connectors.id')
      .select(['connectors.id as id', 'connectors.connector_type as type', 'connectors.organization_id as org', 'webhook_attributions.retry_at as retry_at'])
      .where('connectors.connector_type', 'in', types)
      .where('connectors.status', '<>', 'auth_failed')
      .where((eb) =>
        eb.or([
          eb('webhook_attributions.connector_id', 'is', null),
          eb.and([eb('webhook_attributions.failures', '>', 0), eb('webhook_attributions.retry_at', '<=', now)]),
        ]),
      )
      .orderBy(sql`CASE WHEN webhook_attributions.connector_id IS NULL THEN 0 ELSE 1 END`)
      .orderBy('connectors.created_at')
      .limit(CANDIDATES)
      .execute();
    const byOrg = new Map<string, { id: string; type: string }[]>();
    for (const r of rows) {
      const list = byOrg.get(r.org) ?? [];
      list.push({ id: r.id, type: r.type });
      byOrg.set(r.org, list);
    }
    const out: { id: string; type: string }[] = [];
    while (out.length < RESOLVE_BATCH && byOrg.size > 0) {
      for (const [org, list] of byOrg) {
        const next = list.shift();
        if (next !== undefined && out.length < RESOLVE_BATCH) out.push(next);
        if (list.length === 0) byOrg.delete(org);
      }
    }
    return out;
  }

  async #resolve(connectorId: string, type: string): Promise<void> {
    let info: Record<string, unknown> | undefined;
    try {
      info = await this.o.checkInfo(connectorId);
    } catch (e) {
      this.o.log?.info({ connector_id: connectorId, code: (e as { code?: string }).code }, 'webhook attribution: credential check failed; retried later');
      await this.failed(connectorId, type);
      return;
    }
    if (info === undefined) return; // deleted meanwhile
    await this.learned(connectorId, type, info);
  }
}
