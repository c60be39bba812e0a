/**
 * The manifest's `proxy` section: what the pass-through proxy (src/engine/proxy-request.ts) may
 * forward for this connector beyond its defaults. Part of the manifest schema; docs/proxy.md and
 * docs/manifest.md document it.
 */

/** A header name as RFC 9110 spells a token, letters, digits and "-" only (no "_": proxies drop those). */
const headerName = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9-]*$', maxLength: 100 } as const;

export const PROXY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  description: 'The pass-through proxy to the vendor API (docs/proxy.md): on by default; extra forwarded headers and hosts.',
  properties: {
    enabled: { type: 'boolean', description: 'false: this connector has no proxy (default true).' },
    headers: {
      type: 'array',
      uniqueItems: true,
      items: headerName,
      description: "Request headers the caller may send to the vendor besides the default allow-list (e.g. Notion-Version, X-GitHub-Api-Version). Authorization, Cookie, Host, hop-by-hop and forwarding headers are never forwarded, whatever this says.",
    },
    hosts: {
      type: 'array',
      uniqueItems: true,
      items: { type: 'string', pattern: '^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[^\\s?#]*)?$' },
      description: 'Other base URLs of the vendor (upload or content hosts) a proxy call may name instead of the base URL; the connector\'s auth is sent there too.',
    },
    idempotency_header: {
      ...headerName,
      description: 'A request header the vendor reads as an idempotency key (Stripe: Idempotency-Key): a POST or PATCH carrying it is retried like an idempotent method.',
    },
  },
} as const;
