/**
 * Egress control for upstream connections: addresses a connector must never reach, checked on
 * the address actually connected to (after DNS), so a hostname that resolves to a cloud
 * metadata service is refused as surely as the literal IP.
 *
 * Refused unless the operator allows them: link-local (169.254.0.0/16, fe80::/10, which holds
 * the AWS/GCP/Azure metadata address 169.254.169.254) and the other well-known metadata
 * addresses (Alibaba 100.100.100.200, AWS IPv6 fd00:ec2::254), plus "this network" 0.0.0.0/8,
 * in whatever IPv6 form carries them (IPv4-mapped, IPv4-compatible, NAT64, 6to4: normalizeAddress).
 * Tenant-supplied URLs (webhook endpoints) are held to more: isNonPublicAddress.
 * Loopback and private ranges stay reachable: operators point connectors at proxies and
 * simulators there on purpose, through SWITCHBOARD_<TYPE>_BASE_URL.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { SwitchboardError } from '../errors/index.ts';

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad included), or undefined. */
function ipv6Groups(addr: string): number[] | undefined {
  if (isIP(addr) !== 6) return undefined;
  let text = addr.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad !== null) {
    const [a, b, c, d] = quad.slice(1, 5).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const part = (s: string | undefined): number[] => (s === undefined || s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = part(head);
  const t = part(tail);
  return tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

const quadOf = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * An address as the check sees it: IPv4 itself for the IPv6 forms that carry an IPv4 address a
 * connection may end up at — IPv4-mapped (::ffff:a.b.c.d, which the URL parser writes as
 * [::ffff:a9fe:a9fe]), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4
 * (2002:aabb:ccdd::) — otherwise the address, lower-cased, without brackets or zone.
 */
export function normalizeAddress(ip: string): string {
  const addr = ip.replace(/^\[|\]$/g, '').toLowerCase();
  const g = ipv6Groups(addr);
  if (g === undefined || g.length !== 8) return addr;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const zero4 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zero4 && g5 === 0xffff) return quadOf(g6, g7);
  // IPv4-compatible, except :: and ::1 (which are IPv6's own unspecified and loopback).
  if (zero4 && g5 === 0 && (g6 !== 0 || g7 > 1)) return quadOf(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return quadOf(g6, g7);
  if (g0 === 0x2002) return quadOf(g1, g2);
  return addr;
}

function blockList(v4: [string, number][], v6: [string, number][]): BlockList {
  const b = new BlockList();
  for (const [net, bits] of v4) b.addSubnet(net, bits, 'ipv4');
  for (const [net, bits] of v6) b.addSubnet(net, bits, 'ipv6');
  return b;
}

/** Refused to every egress unless the operator allows them: link-local (cloud metadata), the metadata addresses, "this network". */
const LINK_LOCAL = blockList(
  [
    ['169.254.0.0', 16],
    ['0.0.0.0', 8],
    ['100.100.100.200', 32],
  ],
  [
    ['fe80::', 10],
    ['fd00:ec2::254', 128],
    ['::', 128],
  ],
);

/**
 * Refused for tenant-supplied URLs (webhook endpoints) on top of LINK_LOCAL: loopback, private,
 * shared (CGNAT), unique-local, multicast, documentation, benchmarking and other reserved ranges.
 */
const NON_PUBLIC = blockList(
  [
    ['127.0.0.0', 8],
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['100.64.0.0', 10],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ],
  [
    ['::1', 128],
    ['fc00::', 7],
    ['ff00::', 8],
    ['2001:db8::', 32],
    ['2001::', 32],
    ['64:ff9b:1::', 48],
    ['100::', 64],
    ['fec0::', 10],
  ],
);

function inList(list: BlockList, ip: string): boolean {
  const addr = normalizeAddress(ip);
  const family = isIP(addr);
  return family !== 0 && list.check(addr, family === 4 ? 'ipv4' : 'ipv6');
}

/** True for an address egress refuses by default (link-local, metadata, 0.0.0.0/8), in any IPv6 form carrying it. */
export function isRefusedAddress(ip: string): boolean {
  return inList(LINK_LOCAL, ip);
}

/** True for an address that is not on the public internet (loopback, private, CGNAT, ULA, link-local, reserved): refused for tenant webhook endpoints. */
export function isNonPublicAddress(ip: string): boolean {
  return inList(LINK_LOCAL, ip) || inList(NON_PUBLIC, ip);
}

/** The egress_refused error for a host/address. */
export function egressRefused(host: string, address: string): SwitchboardError {
  return new SwitchboardError(
    'egress_refused',
    `Refused to connect to ${host} (${address}): link-local and metadata addresses are not reachable from connectors; an operator may allow them with SWITCHBOARD_EGRESS_ALLOW_LINK_LOCAL=true`,
    {
      details: { host, address },
    },
  );
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A dns.lookup for net.connect that fails when any address the name resolves to is refused
 * (`refused`), with the error `fail` makes: the connection goes to an address that was checked.
 */
export function filteringLookup(refused: (ip: string) => boolean, fail: (host: string, address: string) => Error) {
  return function lookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => refused(a.address));
      if (bad !== undefined) return callback(fail(hostname, bad.address) as unknown as NodeJS.ErrnoException, '');
      if (options.all === true) return callback(null, list);
      const first = list[0];
      if (first === undefined) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      return callback(null, first.address, first.family);
    });
  };
}

/** A dns.lookup for net.connect that fails for refused addresses. */
export const guardedLookup = filteringLookup(isRefusedAddress, egressRefused);

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
