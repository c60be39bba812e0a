/**
 * What a tenant may register as a webhook endpoint:
 * - an absolute http(s) URL without credentials (`user:password@` is refused: the signing
 *   secret authenticates deliveries, and a URL is listed back in clear);
 * - not an address off the public internet: an IP literal is judged here (IPv4 in any IPv6 form
 *   included, egress.ts), as are `localhost` and `*.localhost` names (RFC 6761); any other name
 *   is judged after DNS, on every connection (webhook-sender.ts);
 * - at most a configured number of endpoints per organization, counted in the transaction that
 *   inserts (PostgreSQL: under an advisory lock per organization; SQLite: its single writer),
 *   so parallel registrations never pass the cap.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { SwitchboardError } from '../errors/index.ts';
import type { DialectName } from '../store/database.ts';
import type { EventsTables } from './migrations.ts';
import { refusedLiteral, type WebhookSenderOptions } from './webhook-sender.ts';

/** The URL of a new endpoint, parsed; 400 invalid_request, webhook_url_credentials or webhook_url_refused. */
export function parseEndpointUrl(url: string, addresses: WebhookSenderOptions): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new SwitchboardError('invalid_request', 'url must be an absolute http(s) URL', {
      errors: [{ path: '/url', message: 'must be an absolute http(s) URL' }],
    });
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new SwitchboardError(
      'webhook_url_credentials',
      "url must not carry credentials (user:password@): deliveries are authenticated by the endpoint's signing secret",
      {
        errors: [{ path: '/url', message: 'must not contain user:password@' }],
      },
    );
  }
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const localName = addresses.allowPrivate !== true && (host === 'localhost' || host.endsWith('.localhost'));
  if (localName || refusedLiteral(parsed, addresses)) {
    throw new SwitchboardError(
      'webhook_url_refused',
      `Webhook endpoints must be on the public internet; ${parsed.host} is not (loopback, private, CGNAT, unique-local, link-local and reserved addresses are refused)`,
      {
        errors: [{ path: '/url', message: 'is an address webhooks may not reach' }],
      },
    );
  }
  return parsed;
}

/** Insert an endpoint unless its organization has `cap` already: 409 webhook_endpoint_limit. */
export async function insertEndpointWithinCap(
  db: Kysely<EventsTables>,
  dialect: DialectName,
  row: EventsTables['webhook_endpoints'],
  cap: number,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtext(${`webhook-endpoints:${row.organization_id}`}))`.execute(trx);
    const { n } = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('organization_id', '=', row.organization_id)
      .executeTakeFirstOrThrow();
    if (Number(n) >= cap) {
      throw new SwitchboardError(
        'webhook_endpoint_limit',
        `This organization has ${Number(n)} webhook endpoints, the most it may have (${cap}); delete one first`,
        {
          details: { limit: cap },
        },
      );
    }
    await trx.insertInto('webhook_endpoints').values(row).execute();
  });
}
