/**
 * Egress control for upstream connections: addresses a connector must never reach, checked on
 * the address actually connected to (after DNS), so a hostname that resolves to a cloud
 * metadata service is refused as surely as the literal IP.
 *
 * Refused unless the operator allows them: link-local (169.254.0.0/16, fe80::/10, which holds
 * the AWS/GCP/Azure metadata address 169.254.169.254) and the other well-known metadata
 * addresses (Alibaba 100.100.100.200, AWS IPv6 fd00:ec2::254), plus "this network" 0.0.0.0/8.
 * Loopback and private ranges stay reachable: operators point connectors at proxies and
 * simulators there on purpose, through SWITCHBOARD_<TYPE>_BASE_URL.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { SwitchboardError } from '../errors/index.ts';

const METADATA = new Set(['100.100.100.200', 'fd00:ec2::254']);

function ipv4Parts(ip: string): number[] | undefined {
  const m = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/i.exec(ip);
  return m ? m.slice(1, 5).map(Number) : undefined;
}

/** True for an address egress refuses by default (link-local, metadata, 0.0.0.0/8). */
export function isRefusedAddress(ip: string): boolean {
  const addr = ip.replace(/^\[|\]$/g, '').toLowerCase();
  const v4 = ipv4Parts(addr);
  if (v4 !== undefined) {
    const [a, b] = v4 as [number, number];
    return (a === 169 && b === 254) || a === 0 || METADATA.has(v4.join('.'));
  }
  if (isIP(addr) === 6) return /^fe[89ab][0-9a-f]?:/.test(addr) || METADATA.has(addr) || addr === '::';
  return false;
}

/** The egress_refused error for a host/address. */
export function egressRefused(host: string, address: string): SwitchboardError {
  return new SwitchboardError('egress_refused', `Refused to connect to ${host} (${address}): link-local and metadata addresses are not reachable from connectors; an operator may allow them with SWITCHBOARD_EGRESS_ALLOW_LINK_LOCAL=true`, {
    details: { host, address },
  });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A dns.lookup for net.connect that fails for refused addresses. */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '');
    const list = addresses as LookupAddress[];
    const bad = list.find((a) => isRefusedAddress(a.address));
    if (bad !== undefined) return callback(egressRefused(hostname, bad.address) as unknown as NodeJS.ErrnoException, '');
    if (options.all === true) return callback(null, list);
    const first = list[0];
    if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
    return callback(null, first.address, first.family);
  });
}

// Hostnames already judged (refused or not): every request checks its URL's host, and a connector
// sends to one host over and over. Bounded: emptied when full.
const judged = new Map<string, boolean>();
const JUDGED_MAX = 1024;

/** Whether a URL's hostname is a refused IP literal (names are guarded at connect, after DNS). */
function refusedHost(hostname: string): boolean {
  let refused = judged.get(hostname);
  if (refused === undefined) {
    const host = hostname.replace(/^\[|\]$/g, '');
    refused = isIP(host) !== 0 && isRefusedAddress(host);
    if (judged.size >= JUDGED_MAX) judged.clear();
    judged.set(hostname, refused);
  }
  return refused;
}

/** Throws egress_refused when a URL's host is a refused IP literal (DNS lookups are guarded at connect). */
export function checkUrlHost(url: URL): void {
  const hostname = url.hostname;
  if (refusedHost(hostname)) throw egressRefused(url.host, hostname.replace(/^\[|\]$/g, ''));
}
