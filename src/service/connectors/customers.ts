/**
 * Customers ("workspaces" in Airbyte's vocabulary): the names a caller may use for one, the
 * workspace listing, and scoped tokens that act for one customer only.
 *
 * - `customer_name` is the stored name; `workspace_name` and `external_user_id` are documented
 *   aliases, folded into it before validation (customerNames). Two of them that disagree: 400.
 * - `definition_id` (Airbyte's connector definition id) selects a connector type, and
 *   `connector_type` matches the type or a manifest alias case-insensitively (src/manifest/kinds.ts).
 * - A scoped token (POST /api/v1/account/applications/scoped-token) carries one customer. The
 *   scope hook refuses it every other customer's connector with 404 connector_not_found on every
 *   route with a connector_id, and refuses it outright (403 customer_forbidden) on routes that do
 *   not declare `customerScoped` — so a route added later is closed to it until it handles scope.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { FastifyRequest } from 'fastify';
import { SwitchboardError } from '../../errors/index.ts';
import { kindIndex } from '../../manifest/index.ts';
import type { ServiceContext } from '../context.ts';

/** Other names of `customer_name`, accepted wherever it is. */
export const CUSTOMER_NAME_ALIASES = ['workspace_name', 'external_user_id'] as const;
const CUSTOMER_FIELDS = ['customer_name', ...CUSTOMER_NAME_ALIASES] as const;

export { customerAliasProperties } from './customer-aliases.ts';

type Part = 'body' | 'query';
const where = (part: Part, field: string): string => (part === 'body' ? `/${field}` : `query:${field}`);

function objectOf(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** customer_name, workspace_name, external_user_id → customer_name (string values only; others are left for the schema to refuse). */
function foldCustomer(target: Record<string, unknown>, part: Part): void {
  const given = CUSTOMER_FIELDS.filter((f) => typeof target[f] === 'string');
  const values = new Set(given.map((f) => target[f] as string));
  if (values.size > 1) {
    throw new SwitchboardError('invalid_request', `${given.join(', ')} name the same customer and disagree: send one of them`, {
      errors: given.map((f) => ({ path: where(part, f), message: `disagrees with ${given.filter((g) => g !== f).join(', ')}` })),
    });
  }
  if (given.length === 0) return;
  target['customer_name'] = target[given[0] as string];
  for (const f of CUSTOMER_NAME_ALIASES) if (typeof target[f] === 'string') delete target[f];
}

/** definition_id → connector_type; connector_type by alias or any case → the type. Unknown names are left for the route to refuse. */
function foldKind(ctx: Pick<ServiceContext, 'registry'>, target: Record<string, unknown>, part: Part): void {
  const kinds = kindIndex(ctx.registry);
  const asked = target['connector_type'];
  const named = typeof asked === 'string' ? kinds.byName(asked) : undefined;
  const id = target['definition_id'];
  if (typeof id === 'string') {
    const byId = kinds.byDefinitionId(id);
    if (byId === undefined) {
      // A list filter by an unknown id matches nothing (like an unknown connector_type); a create or initiate is refused.
      if (part === 'query') return;
      const valid = [...ctx.registry.values()].flatMap((m) =>
        m.manifest.airbyte_definition_id !== undefined ? [`${m.manifest.airbyte_definition_id} (${m.type})`] : [],
      );
      throw new SwitchboardError('unknown_connector_type', `No connector type has the definition id "${id}". Known definition ids: ${valid.join(', ')}`, {
        errors: [{ path: where(part, 'definition_id'), message: `must be one of: ${valid.join(', ')}` }],
        details: { definition_id: id, valid },
      });
    }
    if (typeof asked === 'string' && named !== byId) {
      throw new SwitchboardError(
        'invalid_request',
        `connector_type "${asked}" and definition_id "${id}" (${byId}) name different connector types: send one of them`,
        {
          errors: [
            { path: where(part, 'connector_type'), message: `disagrees with definition_id (${byId})` },
            { path: where(part, 'definition_id'), message: `disagrees with connector_type` },
          ],
        },
      );
    }
    target['connector_type'] = byId;
    delete target['definition_id'];
    return;
  }
  if (named !== undefined) target['connector_type'] = named;
}

/**
 * preValidation hook of a route that names a customer in its body or query: folds the aliases
 * (and, with `kinds`, definition_id and connector_type aliases), then keeps a scoped token to its
 * customer — filling customer_name in when absent, 403 customer_forbidden when it names another.
 */
export function customerNames(ctx: Pick<ServiceContext, 'registry'>, part: Part, o: { kinds?: boolean } = {}) {
  return async function fold(request: FastifyRequest): Promise<void> {
    const target = objectOf(part === 'body' ? request.body : request.query);
    if (target === undefined) return;
    foldCustomer(target, part);
    if (o.kinds === true) foldKind(ctx, target, part);
    const scoped = request.principal?.customerName ?? null;
    if (scoped === null) return;
    if (target['customer_name'] === undefined) target['customer_name'] = scoped;
    else if (target['customer_name'] !== scoped) {
      throw new SwitchboardError('customer_forbidden', `This token is limited to customer "${scoped}"`, {
        errors: [{ path: where(part, 'customer_name'), message: 'is not the customer this token is limited to' }],
      });
    }
  };
}

/** The global preValidation hook enforcing scoped tokens (see the module comment). */
export function customerScopeHook(ctx: Pick<ServiceContext, 'store'>) {
  return async function enforce(request: FastifyRequest): Promise<void> {
    const p = request.principal;
    if (p === null || p.customerName === null || request.is404) return;
    const id = objectOf(request.params)?.['connector_id'];
    if (typeof id === 'string') {
      const row = await ctx.store.getConnector(p.organizationId, id);
      if (row === undefined || row.customer_name !== p.customerName) {
        throw new SwitchboardError('connector_not_found', `No connector ${id} in this organization`, { details: { connector_id: id } });
      }
      return;
    }
    if (request.routeOptions.config.customerScoped === true) return;
    throw new SwitchboardError(
      'customer_forbidden',
      `This token is limited to customer "${p.customerName}"; ${request.method} ${request.routeOptions.url ?? ''} needs an application token`,
    );
  };
}

/** A stable UUID for a customer of an organization (RFC 9562 version 8: derived, not random). */
export function customerId(organizationId: string, name: string): string {
  const h = createHash('sha256').update(`${organizationId}\n${name}`).digest('hex');
  const variant = ((parseInt(h[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface WorkspaceQuery {
  name_contains?: string;
  limit?: number;
  cursor?: string;
}

function decodeNameCursor(s: string): string {
  const v = Buffer.from(s, 'base64url').toString('utf8');
  if (v === '' || Buffer.from(v, 'utf8').toString('base64url') !== s) {
    throw new SwitchboardError('invalid_request', 'cursor is not a cursor returned by this endpoint', {
      errors: [{ path: 'query:cursor', message: 'is not a cursor returned by this endpoint' }],
    });
  }
  return v;
}

/**
 * The organization's customers — every distinct customer_name of its connectors — whose name
 * contains `name_contains` (case-insensitively for ASCII letters), in name order, paginated; a
 * scoped token sees only its own customer.
 */
export async function listWorkspaces(
  ctx: Pick<ServiceContext, 'database'>,
  organizationId: string,
  scopedTo: string | null,
  q: WorkspaceQuery,
): Promise<{ data: { id: string; name: string }[]; meta: { cursor: string | null; has_more: boolean } }> {
  const limit = q.limit ?? 100;
  let query = ctx.database.db.selectFrom('connectors').select('customer_name').distinct().where('organization_id', '=', organizationId);
  if (scopedTo !== null) query = query.where('customer_name', '=', scopedTo);
  if (q.name_contains !== undefined && q.name_contains !== '') {
    const pattern = `%${q.name_contains.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where(sql<boolean>`lower(customer_name) like ${pattern} escape '\\'`);
  }
  if (q.cursor !== undefined) query = query.where('customer_name', '>', decodeNameCursor(q.cursor));
  const rows = await query
    .orderBy('customer_name')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const hasMore = rows.length > limit;
  return {
    data: page.map((r) => ({ id: customerId(organizationId, r.customer_name), name: r.customer_name })),
    meta: { cursor: hasMore && last !== undefined ? Buffer.from(last.customer_name, 'utf8').toString('base64url') : null, has_more: hasMore },
  };
}
