/**
 * The service side of vendor webhooks in, beyond the receiver (receive.ts):
 *
 * - ingressGate: at most `limit` webhook requests in flight per process, counted from their
 *   arrival (onRequest, before the body is read) until their answer is sent or the connection
 *   closes; more are answered 503 webhook_queue_full with Retry-After at once, without reading
 *   their bodies. With the route's bodyLimit (SWITCHBOARD_WEBHOOK_BODY_LIMIT_BYTES) this bounds the
 *   memory unverified deliveries can hold: limit × body limit.
 * - ingressUrlOf: the URL a vendor is pointed at for a connector's deliveries.
 * - subscriptionParams: hosted execute of the manifest's `webhooks.subscribe` action (the action
 *   that points the vendor at a URL, monday's webhooks.create) always points it at that URL: the
 *   param is filled in when absent, and any other URL is refused (400 webhook_ingress_url_only), so
 *   a tenant cannot have the vendor sign deliveries to a server of its own.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/compile.ts';

export function ingressGate(limit: number): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  let inFlight = 0;
  return async function gate(_request, reply) {
    if (inFlight >= limit) {
      reply.header('retry-after', '1');
      throw new SwitchboardError('webhook_queue_full', `${inFlight} webhook requests are in flight on this instance; retry later`, {
        details: { retry_after_ms: 1000 },
      });
    }
    inFlight++;
    let released = false;
    reply.raw.once('close', () => {
      if (released) return;
      released = true;
      inFlight--;
    });
  };
}

/** The URL a vendor posts a connector's deliveries to (per-connector subscriptions). */
export function ingressUrlOf(ctx: { publicUrl: () => string }, row: { id: string; connector_type: string }): string {
  return `${ctx.publicUrl()}/api/v1/webhooks/${row.connector_type}/${row.id}`;
}

/**
 * The params of a hosted execute: for the type's subscribe action, its URL param set to the
 * connector's ingress URL (refused when the caller names another); other actions' params as given.
 */
export function subscriptionParams(
  ctx: { publicUrl: () => string },
  row: { id: string; connector_type: string },
  manifest: LoadedManifest,
  entity: string,
  action: string,
  params: Record<string, unknown>,
): Record<string, unknown> {
  const s = manifest.webhooks?.subscribe;
  if (s === undefined || s.entity !== entity || s.action !== action) return params;
  const url = ingressUrlOf(ctx, row);
  const given = params[s.urlParam];
  if (given !== undefined && given !== null && given !== url) {
    throw new SwitchboardError(
      'webhook_ingress_url_only',
      `${entity}.${action} points ${manifest.type} at a URL: only this connector's webhook URL (${url}) is allowed; omit ${s.urlParam} and the service fills it in`,
      {
        errors: [{ path: `/params/${s.urlParam}`, message: `must be omitted or equal ${url}` }],
      },
    );
  }
  return { ...params, [s.urlParam]: url };
}
