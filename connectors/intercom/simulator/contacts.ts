/**
 * The seeded workspace's contacts, generated from (seed, gen) whenever one is read: a contact's
 * fields correlate with each other and with its company (its email domain).
 */
import { pick } from '../../../src/simulator/sim-server.ts';
import { chance, emailLocal, int, personName, phoneNumber, pool, recordRandom, slug, type Json } from './data.ts';

const DAY = 86_400;
const S_CONTACT = 1;

export interface ContactRow {
  gen: number;
  created_at: number;
  companyIds: string[];
  tagIds: string[];
  noteIds: string[];
}

/** What a contact draws on: the seed, where the data ends, the workspace, its admins and company domains. */
export interface ContactSources {
  seed: number;
  anchor: number;
  workspaceId: string;
  admins: Json[];
  domains: Map<string, string>;
}

/** A contact as GET /contacts/{id} returns it. */
export function contactOf(w: ContactSources, id: string, row: ContactRow): Json {
  const { seed, anchor, workspaceId, admins, domains } = w;
  const r = recordRandom(seed, S_CONTACT, row.gen);
  const role = chance(r, 0.82) ? 'user' : 'lead';
  const { first, last } = personName(r);
  const loc = pick(r, pool<[string, string, string, string, string, string]>('locations'));
  const domain = row.companyIds[0] !== undefined && chance(r, 0.7) ? (domains.get(row.companyIds[0]) as string) : pick(r, pool<string>('email_domains'));
  const created = row.created_at;
  const age = Math.max(1, anchor - created);
  const seen = chance(r, 0.88) ? created + Math.floor(r() * age) : null;
  const at = (p: number): number | null => (chance(r, p) ? created + Math.floor(r() * age) : null);
  const [browser, versions] = pick(r, pool<[string, string[]]>('browsers'));
  const android = chance(r, 0.1);
  const ios = !android && chance(r, 0.12);
  const utm = chance(r, 0.25);
  const opened = at(0.35);
  const list = (what: string, ids: string[] = [], type = ''): Json => ({
    type: 'list',
    data: ids.slice(0, 10).map((x) => ({ type, id: x, url: `/${what}/${x}` })),
    url: `/contacts/${id}/${what}`,
    total_count: ids.length,
    has_more: ids.length > 10,
  });
  const name = role === 'lead' && chance(r, 0.15) ? null : `${first} ${last}`;
  const signedUp = role === 'user' ? created - (chance(r, 0.3) ? int(r, 0, 400) * DAY : 0) : null;
  const updated = Math.max(created, seen ?? created, created + Math.floor(r() * age * 0.5));
  const app = (on: boolean, devices: readonly string[], versions: readonly string[], sdk: string): (string | number | null)[] =>
    on ? ['Acme Mobile', `4.${int(r, 0, 9)}.${int(r, 0, 9)}`, pick(r, devices), pick(r, versions), sdk, seen ?? created] : [null, null, null, null, null, null];
  const [androidApp, androidVersion, androidDevice, androidOs, androidSdk, androidSeen] = app(
    android,
    ['Pixel 8', 'Pixel 7a', 'Galaxy S24', 'OnePlus 12'],
    ['13', '14', '15'],
    '15.6.1',
  );
  const [iosApp, iosVersion, iosDevice, iosOs, iosSdk, iosSeen] = app(ios, ['iPhone 15', 'iPhone 14 Pro', 'iPad Air'], ['17.5', '17.6', '18.0'], '17.2.0');
  return {
    type: 'contact',
    id,
    workspace_id: workspaceId,
    external_id: role === 'user' && chance(r, 0.9) ? `usr_${String(100000 + row.gen)}` : null,
    role,
    email: `${emailLocal(first, last)}${row.gen + 1}@${domain}`,
    phone: chance(r, 0.45) ? phoneNumber(r, loc[3]) : null,
    name,
    avatar: chance(r, 0.25)
      ? { type: 'avatar', image_url: `https://static.intercomassets.com/avatars/${row.gen + 1}/square_128/${slug(first)}-${slug(last)}.jpg` }
      : null,
    owner_id: chance(r, 0.3) ? Number(pick(r, admins).id) : null,
    social_profiles: {
      type: 'list',
      data: chance(r, 0.2) ? [{ type: 'social_profile', name: 'Twitter', url: `https://twitter.com/${emailLocal(first, last).replace('.', '_')}` }] : [],
    },
    has_hard_bounced: chance(r, 0.015),
    marked_email_as_spam: chance(r, 0.01),
    unsubscribed_from_emails: chance(r, 0.08),
    created_at: created,
    updated_at: Math.min(updated, anchor),
    signed_up_at: signedUp,
    last_seen_at: seen,
    last_replied_at: at(0.35),
    last_contacted_at: at(0.4),
    last_email_opened_at: opened,
    last_email_clicked_at: opened !== null && chance(r, 0.4) ? opened + int(r, 10, 3600) : null,
    language_override: chance(r, 0.04) ? pick(r, ['fr', 'de', 'es', 'pt-BR'] as const) : null,
    browser: seen !== null ? browser : null,
    browser_version: seen !== null ? pick(r, versions) : null,
    browser_language: seen !== null ? loc[5] : null,
    os: seen !== null ? pick(r, pool<string>('operating_systems')) : null,
    location: { type: 'location', country: loc[2], region: loc[1], city: loc[0], country_code: loc[3], continent_code: loc[4] },
    android_app_name: androidApp,
    android_app_version: androidVersion,
    android_device: androidDevice,
    android_os_version: androidOs,
    android_sdk_version: androidSdk,
    android_last_seen_at: androidSeen,
    ios_app_name: iosApp,
    ios_app_version: iosVersion,
    ios_device: iosDevice,
    ios_os_version: iosOs,
    ios_sdk_version: iosSdk,
    ios_last_seen_at: iosSeen,
    custom_attributes:
      role === 'user'
        ? { plan_tier: pick(r, ['free', 'starter', 'pro', 'enterprise'] as const), seats: int(r, 1, 250), beta_user: chance(r, 0.2) }
        : { lead_source: pick(r, ['website', 'webinar', 'trade show', 'referral'] as const) },
    opted_out_subscription_types: list('subscriptions'),
    opted_in_subscription_types: list('subscriptions'),
    utm_campaign: utm ? pick(r, pool<string>('utm_campaigns')) : null,
    utm_content: utm && chance(r, 0.5) ? pick(r, ['hero_cta', 'pricing_banner', 'footer_link'] as const) : null,
    utm_medium: utm ? pick(r, pool<string>('utm_mediums')) : null,
    utm_source: utm ? pick(r, pool<string>('utm_sources')) : null,
    utm_term: utm && chance(r, 0.3) ? pick(r, ['customer messaging', 'help desk', 'live chat'] as const) : null,
    referrer: chance(r, 0.3)
      ? pick(r, ['https://www.google.com/', 'https://www.linkedin.com/', 'https://news.ycombinator.com/', 'https://www.g2.com/'] as const)
      : null,
    tags: list('tags', row.tagIds, 'tag'),
    notes: list('notes', row.noteIds, 'note'),
    companies: list('companies', row.companyIds, 'company'),
  };
}
