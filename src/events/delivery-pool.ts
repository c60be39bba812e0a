/**
 * Fairness of outgoing webhook deliveries: a pool of sends in flight, refilled as each one ends
 * (never a batch waiting for its slowest send), with caps per endpoint and per organization, and
 * due deliveries picked round-robin across organizations. An organization whose endpoints hang
 * holds at most `perOrganization` of the `total` slots (and each endpoint at most
 * `perEndpoint`): another organization's delivery is claimed at the next fill, beside them.
 *
 * Claiming stays atomic across instances: candidates are read (ranked per endpoint and per
 * organization, oldest due first), chosen here within the caps, then claimed with an UPDATE that
 * re-checks each row is still free; a row another instance claimed meanwhile is not returned.
 * The caps count this instance's sends (each instance has its own pool).
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { EventsTables } from './migrations.ts';

export interface PoolLimits {
  /** Sends in flight per instance; default 32. */
  total: number;
  /** Sends in flight per organization (per instance); default 8. */
  perOrganization: number;
  /** Sends in flight per endpoint (per instance); default 2. */
  perEndpoint: number;
}

export const DEFAULT_POOL_LIMITS: PoolLimits = { total: 32, perOrganization: 8, perEndpoint: 2 };

type Delivery = EventsTables['webhook_deliveries'];
type Candidate = { id: string; endpoint_id: string; organization_id: string };

const bump = (m: Map<string, number>, k: string, by: number): void => {
  const n = (m.get(k) ?? 0) + by;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
};

export class DeliveryPool {
  private readonly byEndpoint = new Map<string, number>();
  private readonly byOrganization = new Map<string, number>();
  private inFlight = 0;
  /** Sends finished since the pool was made. */
  completed = 0;
  private filling: Promise<number> | undefined;
  private refill = false;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly db: Kysely<EventsTables>,
    private readonly limits: PoolLimits,
    private readonly claimFor: () => { by: string; now: string; until: string },
    private readonly run: (d: Delivery) => Promise<void>,
    private readonly onSettled: () => void,
  ) {}

  get busy(): number {
    return this.inFlight;
  }

  /** Claim due deliveries into the free slots and start them; resolves with how many started. One fill at a time (a call during one runs again after it). */
  fill(): Promise<number> {
    if (this.filling !== undefined) {
      this.refill = true;
      return this.filling;
    }
    const p = (async () => {
      let started = 0;
      do {
        this.refill = false;
        started += await this.fillOnce();
      } while (this.refill);
      return started;
    })().finally(() => {
      this.filling = undefined;
    });
    this.filling = p;
    return p;
  }

  /** Resolves when a send in flight ends (at once when none is). */
  nextSettled(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  /** Resolves when nothing is in flight. */
  async drained(): Promise<void> {
    await this.filling?.catch(() => undefined);
    while (this.inFlight > 0) await this.nextSettled();
  }

  private async fillOnce(): Promise<number> {
    let started = 0;
    for (;;) {
      const room = this.limits.total - this.inFlight;
      if (room <= 0) return started;
      const chosen = this.choose(await this.candidates(room), room);
      if (chosen.length === 0) return started;
      const claimed = await this.claim(chosen.map((c) => c.id));
      const orgOf = new Map(chosen.map((c) => [c.id, c.organization_id]));
      for (const d of claimed) this.start(d, orgOf.get(d.id) ?? '');
      started += claimed.length;
      if (claimed.length === 0) return started;
    }
  }

  private start(d: Delivery, organizationId: string): void {
    this.inFlight++;
    bump(this.byEndpoint, d.endpoint_id, 1);
    bump(this.byOrganization, organizationId, 1);
    void this.run(d)
      .catch(() => undefined)
      .finally(() => {
        this.inFlight--;
        this.completed++;
        bump(this.byEndpoint, d.endpoint_id, -1);
        bump(this.byOrganization, organizationId, -1);
        const w = this.waiters;
        this.waiters = [];
        for (const r of w) r();
        this.onSettled();
      });
  }

  /**
   * Due, unclaimed deliveries of endpoints and organizations not at their cap here: at most
   * perEndpoint per endpoint, ordered by their rank within their organization, then oldest due,
   * so every organization's oldest comes before any organization's second.
   */
  private async candidates(room: number): Promise<Candidate[]> {
    const { now } = this.claimFor();
    const fullEndpoints = [...this.byEndpoint].filter(([, n]) => n >= this.limits.perEndpoint).map(([k]) => k);
    const fullOrgs = [...this.byOrganization].filter(([, n]) => n >= this.limits.perOrganization).map(([k]) => k);
    const notIn = (col: string, ids: string[]) => (ids.length === 0 ? sql`` : sql`AND ${sql.ref(col)} NOT IN (${sql.join(ids)})`);
    const { rows } = await sql<Candidate>`
      SELECT id, endpoint_id, organization_id FROM (
        SELECT id, endpoint_id, organization_id, next_attempt_at,
          ROW_NUMBER() OVER (PARTITION BY organization_id ORDER BY next_attempt_at, id) AS org_rank
        FROM (
          SELECT d.id, d.endpoint_id, e.organization_id, d.next_attempt_at,
            ROW_NUMBER() OVER (PARTITION BY d.endpoint_id ORDER BY d.next_attempt_at, d.id) AS endpoint_rank
          FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= ${now} AND (d.claimed_until IS NULL OR d.claimed_until < ${now})
            ${notIn('d.endpoint_id', fullEndpoints)} ${notIn('e.organization_id', fullOrgs)}
        ) per_endpoint
        WHERE endpoint_rank <= ${this.limits.perEndpoint}
      ) per_organization
      ORDER BY org_rank, next_attempt_at, id
      LIMIT ${room * 4}`.execute(this.db);
    return rows;
  }

  /** The candidates that fit the caps, in their fair order, at most `room`. */
  private choose(candidates: Candidate[], room: number): Candidate[] {
    const endpoints = new Map(this.byEndpoint);
    const orgs = new Map(this.byOrganization);
    const out: Candidate[] = [];
    for (const c of candidates) {
      if (out.length >= room) break;
      if ((endpoints.get(c.endpoint_id) ?? 0) >= this.limits.perEndpoint || (orgs.get(c.organization_id) ?? 0) >= this.limits.perOrganization) continue;
      bump(endpoints, c.endpoint_id, 1);
      bump(orgs, c.organization_id, 1);
      out.push(c);
    }
    return out;
  }

  /** Claim these rows for this instance, those still free (another instance may have taken some). */
  private async claim(ids: string[]): Promise<Delivery[]> {
    const { by, now, until } = this.claimFor();
    const { rows } = await sql<Delivery>`
      UPDATE webhook_deliveries SET claimed_by = ${by}, claimed_until = ${until}
      WHERE id IN (${sql.join(ids)}) AND status = 'pending' AND next_attempt_at <= ${now} AND (claimed_until IS NULL OR claimed_until < ${now})
      RETURNING *`.execute(this.db);
    return rows;
  }
}
