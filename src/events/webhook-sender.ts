/**
 * The transport of outgoing webhook deliveries, apart from the connectors' (upstream-transport.ts):
 * the URL is a tenant's, so it is held to more.
 *
 * - Addresses: a tenant endpoint may reach the public internet only. Loopback, private, CGNAT,
 *   unique-local, link-local, metadata and reserved ranges are refused (egress.ts
 *   isNonPublicAddress) for an IP literal before connecting, and for a hostname on every address
 *   it resolves to, in the connection's own lookup: the connection goes to the address that was
 *   checked (no second resolution an attacker's DNS could answer differently). An operator may
 *   allow private ranges (SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE_ADDRESSES, for development and
 *   tests); link-local and metadata addresses then stay refused unless
 *   SWITCHBOARD_EGRESS_ALLOW_LINK_LOCAL allows them too.
 * - Redirects are never followed: a 3xx is a failed attempt.
 * - The answer's body is never read past a small cap and never kept; what a delivery records is
 *   the status and a generic reason (DeliveryFailure), never the body nor a connect error's
 *   detail (which would tell a tenant which internal ports are open).
 * - Each send is bounded in time (headers and body) by the caller's timeout.
 */
import { Agent, request } from 'undici';
import { filteringLookup, isNonPublicAddress, isRefusedAddress, normalizeAddress } from '../http/egress.ts';
import { isIP } from 'node:net';

export interface WebhookSenderOptions {
  /** Allow loopback, private, CGNAT and unique-local addresses (SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivate?: boolean;
  /** Allow link-local and metadata addresses as well (SWITCHBOARD_EGRESS_ALLOW_LINK_LOCAL). */
  allowLinkLocal?: boolean;
}

/** What one send answers: the endpoint's status. */
export interface SentDelivery {
  status: number;
}

/** One POST of a delivery: url, headers, body, within timeoutMs. Resolves with the status; rejects with DeliveryFailure. */
export type WebhookSend = (url: string, headers: Record<string, string>, body: string, timeoutMs: number) => Promise<SentDelivery>;

/** A failed send, with the generic reason the delivery log shows. */
export class DeliveryFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** The generic reasons the delivery log shows for a send that got no HTTP answer. */
export const DELIVERY_REASONS = {
  refused: 'address refused: webhook endpoints must be on the public internet',
  timeout: 'no answer in time',
  connect: 'connection failed',
} as const;

/** Bytes of an answer read (and dropped) so the connection can be reused; a longer answer closes it. */
const DRAIN_BYTES = 64 * 1024;

class AddressRefused extends Error {
  readonly code = 'EWEBHOOKREFUSED';
}

/** Whether the sender refuses an address under these options. */
export function addressRefused(ip: string, o: WebhookSenderOptions): boolean {
  if (isRefusedAddress(ip)) return o.allowLinkLocal !== true;
  return o.allowPrivate !== true && isNonPublicAddress(ip);
}

/** Whether a URL's host is an IP literal the sender refuses (hostnames are judged at connect, after DNS). */
export function refusedLiteral(url: URL, o: WebhookSenderOptions): boolean {
  const host = normalizeAddress(url.hostname);
  return isIP(host) !== 0 && addressRefused(host, o);
}

/** A sender over an undici Agent of its own, whose lookups refuse what the options refuse. */
export function createWebhookSender(o: WebhookSenderOptions = {}): { send: WebhookSend; close(): Promise<void> } {
  const lookup = filteringLookup(
    (ip) => addressRefused(ip, o),
    (host) => new AddressRefused(`refused address for ${host}`),
  );
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64, connect: { lookup } });
  const send: WebhookSend = async (url, headers, body, timeoutMs) => {
    const target = new URL(url);
    if (refusedLiteral(target, o)) throw new DeliveryFailure(DELIVERY_REASONS.refused);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(target, { method: 'POST', headers, body, dispatcher: agent, signal, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      await res.body.dump({ limit: DRAIN_BYTES, signal }).catch(() => undefined);
      return { status: res.statusCode };
    } catch (e) {
      if (e instanceof AddressRefused || (e as { cause?: unknown }).cause instanceof AddressRefused) throw new DeliveryFailure(DELIVERY_REASONS.refused);
      const name = (e as Error).name;
      const code = (e as { code?: string }).code;
      if (signal.aborted || name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
        throw new DeliveryFailure(DELIVERY_REASONS.timeout);
      throw new DeliveryFailure(DELIVERY_REASONS.connect);
    }
  };
  return { send, close: () => agent.close() };
}
