/**
 * Deterministic workspace content for the Intercom simulator: the vocabularies (the sidecar's
 * `pools`, connectors/intercom/simulator.yaml), id formats and small value generators.
 *
 * Big tables (contacts, companies, conversations) keep only a row per record in memory; the
 * record's fields are regenerated on demand from (seed, gen), so the 100 000-contact benchmark
 * dataset costs a few tens of MB and the same seed always yields byte-identical responses.
 * Shapes follow the examples of Intercom's OpenAPI description 2.14 (field order included).
 */
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../manifest/connectors-dir.ts';
import { loadSidecar } from '../../simulator/sidecar.ts';
import { mixSeed, pick, seededRandom } from '../../simulator/sim-server.ts';

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

/** Strip HTML tags (display_as=plaintext, email previews). */
export function plainText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/p>\s*<p>/gi, '\n\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .trim();
}

/** Intercom stores note and message bodies as HTML: plain text is wrapped in a paragraph. */
export function htmlBody(text: string): string {
  return /^\s*</.test(text) ? text : `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}</p>`;
}

/** Intercom's simulator sidecar; its `pools` hold the workspace's vocabularies. */
export const INTERCOM_SIDECAR = loadSidecar(join(CONNECTORS_DIR, 'intercom', 'simulator.yaml'));
const pool = <T>(name: string): readonly T[] => {
  const values = INTERCOM_SIDECAR.pools?.[name];
  if (values === undefined) throw new Error(`connectors/intercom/simulator.yaml declares no pool ${name}`);
  return values as T[];
};
type S = string;
export const FIRST_NAMES = pool<S>('first_names');
export const LAST_NAMES = pool<S>('last_names');
export const EMAIL_DOMAINS = pool<S>('email_domains');
/** city, region, country, country_code, continent_code, browser language */
export const LOCATIONS = pool<readonly [S, S, S, S, S, S]>('locations');
export const BROWSERS = pool<readonly [S, readonly S[]]>('browsers');
export const OPERATING_SYSTEMS = pool<S>('operating_systems');
export const INDUSTRIES = pool<S>('industries');
const COMPANY_PREFIXES = pool<S>('company_prefixes');
const COMPANY_STEMS = pool<S>('company_stems');
const COMPANY_SUFFIXES = pool<S>('company_suffixes');
/** [plan id, plan name] as Intercom lists a company's plan. */
export const PLANS = pool<readonly [S, S]>('plans');
export const ADMIN_JOB_TITLES = pool<S>('admin_job_titles');
export const TEAM_NAMES = pool<S>('team_names');
export const TAG_NAMES = pool<S>('tag_names');
/** Segment name, person_type (OpenAPI enum: contact = leads, user = users), membership rule (a search query). */
export const SEGMENTS = pool<readonly [S, 'user' | 'contact', unknown]>('segments');
export const SUBJECTS = pool<S>('subjects');
export const MESSAGES = pool<S>('messages');
export const REPLIES = pool<S>('replies');
export const NOTE_BODIES = pool<S>('note_bodies');
export const ARTICLE_TITLES = pool<S>('article_titles');
export const UTM_SOURCES = pool<S>('utm_sources');
export const UTM_MEDIUMS = pool<S>('utm_mediums');
export const UTM_CAMPAIGNS = pool<S>('utm_campaigns');

export function personName(rand: Rand): { first: string; last: string } {
  return { first: pick(rand, FIRST_NAMES), last: pick(rand, LAST_NAMES) };
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
  return `${pick(rand, COMPANY_PREFIXES)}${pick(rand, COMPANY_STEMS)} ${pick(rand, COMPANY_SUFFIXES)}`;
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
