/**
 * Deterministic workspace content for the Intercom simulator: the vocabularies (the sidecar's
 * `pools`, connectors/intercom/simulator.yaml), id formats and small value generators.
 */
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../../src/manifest/connectors-dir.ts';
import { loadSidecar } from '../../../src/simulator/sidecar.ts';
import { mixSeed, pick, seededRandom } from '../../../src/simulator/sim-server.ts';

export type Json = Record<string, unknown>;
export type Rand = () => number;

/** A PRNG for one record: independent of generation order. */
export function recordRandom(seed: number, salt: number, gen: number): Rand {
  return seededRandom(mixSeed(seed, salt, gen));
}

export const int = (rand: Rand, min: number, max: number): number => min + Math.floor(rand() * (max - min + 1));
export const chance = (rand: Rand, p: number): boolean => rand() < p;

/**
 * A 24-hex-digit id like Intercom's contact, company and segment ids (MongoDB ObjectIds: a
 * 4-byte Unix time, then random bytes, then a counter that keeps ids unique).
 */
export function objectId(rand: Rand, unixSeconds: number, counter: number): string {
  const ts = (unixSeconds >>> 0).toString(16).padStart(8, '0');
  let mid = '';
  for (let i = 0; i < 10; i++) mid += Math.floor(rand() * 16).toString(16);
  return ts + mid + (counter & 0xffffff).toString(16).padStart(6, '0');
}

/** Intercom stores note and message bodies as HTML: plain text is wrapped in a paragraph. */
export function htmlBody(text: string): string {
  return /^\s*</.test(text) ? text : `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`;
}

/** Intercom's simulator sidecar; its `pools` hold the workspace's vocabularies. */
export const INTERCOM_SIDECAR = loadSidecar(join(CONNECTORS_DIR, 'intercom', 'simulator.yaml'));
export function pool<T>(name: string): readonly T[] {
  const values = INTERCOM_SIDECAR.pools?.[name];
  if (values === undefined) throw new Error(`connectors/intercom/simulator.yaml declares no pool ${name}`);
  return values as T[];
}

export function personName(rand: Rand): { first: string; last: string } {
  return { first: pick(rand, pool<string>('first_names')), last: pick(rand, pool<string>('last_names')) };
}

/** An email local part without accents or apostrophes. */
export function emailLocal(first: string, last: string): string {
  const key = `${first}.${last}`;
  let local = emailLocals.get(key);
  if (local === undefined) {
    local = key
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, '')
      .replace(/[^A-Za-z.]/g, '')
      .toLowerCase();
    emailLocals.set(key, local);
  }
  return local;
}
const emailLocals = new Map<string, string>();

export function companyName(rand: Rand): string {
  return `${pick(rand, pool<string>('company_prefixes'))}${pick(rand, pool<string>('company_stems'))} ${pick(rand, pool<string>('company_suffixes'))}`;
}

export function slug(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

export function phoneNumber(rand: Rand, countryCode: string): string {
  const digits = (n: number): string => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('');
  switch (countryCode) {
    case 'USA':
    case 'CAN':
      return `+1 ${int(rand, 201, 989)} 555 ${digits(4)}`;
    case 'IRL':
      return `+353 8${int(rand, 3, 9)} ${digits(3)} ${digits(4)}`;
    case 'GBR':
      return `+44 7${digits(3)} ${digits(6)}`;
    case 'AUS':
      return `+61 4${digits(2)} ${digits(3)} ${digits(3)}`;
    default:
      return `+${int(rand, 30, 49)} ${digits(3)} ${digits(6)}`;
  }
}
