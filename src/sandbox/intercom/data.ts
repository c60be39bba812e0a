/**
 * Deterministic workspace content for the Intercom simulator: vocabularies, id formats and the
 * generators of seeded contacts, companies and conversations.
 *
 * Big tables (contacts, companies, conversations) keep only a row per record in memory; the
 * record's fields are regenerated on demand from (seed, gen), so the 100 000-contact benchmark
 * dataset costs a few tens of MB and the same seed always yields byte-identical responses.
 * Shapes follow the examples of Intercom's OpenAPI description 2.14 (field order included).
 */
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

export const FIRST_NAMES = [
  'Aoife', 'Liam', 'Sofia', 'Mateo', 'Priya', 'Kenji', 'Amara', 'Lucas', 'Freya', 'Omar', 'Chloe', 'Ravi', 'Ingrid', 'Diego', 'Hana',
  'Noah', 'Zara', 'Elias', 'Mei', 'Tomás', 'Leila', 'Jonas', 'Nadia', 'Arjun', 'Camille', 'Felix', 'Yara', 'Hugo', 'Sienna', 'Kwame',
  'Olivia', 'Ethan', 'Isla', 'Marco', 'Anya', 'Samuel', 'Lucía', 'Theo', 'Mira', 'Daniel', 'Ava', 'Rohan', 'Elena', 'Finn', 'Saoirse',
  'Jamal', 'Emma', 'Kai', 'Nora', 'Pablo',
] as const;

export const LAST_NAMES = [
  'Murphy', 'Kelly', 'García', 'Nakamura', 'Okafor', 'Schmidt', 'Patel', 'Johansson', 'Rossi', 'Dubois', 'Kowalski', 'Haddad', 'Silva',
  'Chen', 'Byrne', "O'Brien", 'Novak', 'Fernández', 'Müller', 'Larsen', 'Mensah', 'Ivanova', 'Walsh', 'Tanaka', 'Costa', 'Nguyen',
  'Andersson', 'Moreau', 'Sato', 'Reyes', 'Kim', 'Brennan', 'Fischer', 'Lopez', 'Adeyemi', 'Ward', 'Horvat', 'Quinn', 'Bakker', 'Singh',
] as const;

export const EMAIL_DOMAINS = ['gmail.com', 'outlook.com', 'yahoo.com', 'icloud.com', 'proton.me', 'fastmail.com'] as const;

/** city, region, country, country_code, continent_code, browser language, timezone-ish offset unused */
export const LOCATIONS = [
  ['Dublin', 'Dublin', 'Ireland', 'IRL', 'EU', 'en-IE'],
  ['London', 'England', 'United Kingdom', 'GBR', 'EU', 'en-GB'],
  ['San Francisco', 'California', 'United States', 'USA', 'NA', 'en-US'],
  ['New York', 'New York', 'United States', 'USA', 'NA', 'en-US'],
  ['Austin', 'Texas', 'United States', 'USA', 'NA', 'en-US'],
  ['Toronto', 'Ontario', 'Canada', 'CAN', 'NA', 'en-CA'],
  ['Berlin', 'Berlin', 'Germany', 'DEU', 'EU', 'de'],
  ['Paris', 'Île-de-France', 'France', 'FRA', 'EU', 'fr'],
  ['Madrid', 'Madrid', 'Spain', 'ESP', 'EU', 'es'],
  ['Amsterdam', 'North Holland', 'Netherlands', 'NLD', 'EU', 'nl'],
  ['Stockholm', 'Stockholm', 'Sweden', 'SWE', 'EU', 'sv'],
  ['Sydney', 'New South Wales', 'Australia', 'AUS', 'OC', 'en-AU'],
  ['Melbourne', 'Victoria', 'Australia', 'AUS', 'OC', 'en-AU'],
  ['Tokyo', 'Tokyo', 'Japan', 'JPN', 'AS', 'ja'],
  ['Bengaluru', 'Karnataka', 'India', 'IND', 'AS', 'en-IN'],
  ['São Paulo', 'São Paulo', 'Brazil', 'BRA', 'SA', 'pt-BR'],
  ['Lagos', 'Lagos', 'Nigeria', 'NGA', 'AF', 'en'],
  ['Singapore', 'Singapore', 'Singapore', 'SGP', 'AS', 'en-SG'],
] as const;

export const BROWSERS = [
  ['chrome', ['124.0.6367.91', '125.0.6422.60', '126.0.6478.126', '127.0.6533.88']],
  ['safari', ['17.4', '17.5', '17.6']],
  ['firefox', ['125.0', '126.0', '127.0.2']],
  ['edge', ['124.0.2478.80', '126.0.2592.87']],
] as const;

export const OPERATING_SYSTEMS = ['OS X 14.4.1', 'OS X 14.5', 'Windows 10', 'Windows 11', 'Linux', 'iOS 17.5', 'Android 14'] as const;

export const INDUSTRIES = ['Software', 'Financial Services', 'Retail', 'Healthcare', 'Education', 'Manufacturing', 'Logistics', 'Media', 'Hospitality', 'Real Estate'] as const;

const COMPANY_PREFIXES = [
  'North', 'Blue', 'Bright', 'Silver', 'Harbor', 'Summit', 'Cedar', 'Atlas', 'Nova', 'Iron', 'Lumen', 'Pioneer', 'Granite', 'Copper', 'Maple',
  'Orbit', 'Vertex', 'Willow', 'Crescent', 'Beacon',
] as const;
const COMPANY_STEMS = ['wind', 'stone', 'field', 'bridge', 'peak', 'path', 'light', 'works', 'line', 'forge', 'wave', 'gate', 'leaf', 'point'] as const;
const COMPANY_SUFFIXES = ['Labs', 'Inc', 'Ltd', 'Analytics', 'Health', 'Logistics', 'Studios', 'Systems', 'Partners', 'Foods', 'Capital', 'Robotics'] as const;

/** [plan id, plan name] as Intercom lists a company's plan. */
export const PLANS = [
  ['269315', 'Starter'],
  ['269316', 'Pro'],
  ['269317', 'Premium'],
  ['269318', 'Enterprise'],
] as const;

export const ADMIN_JOB_TITLES = ['Support Engineer', 'Customer Success Manager', 'Head of Support', 'Account Executive', 'Support Specialist', 'Solutions Engineer', 'Product Specialist'] as const;

export const TEAM_NAMES = ['Tier 1 Support', 'Tier 2 Support', 'Billing', 'Sales', 'Customer Success', 'Onboarding', 'Escalations'] as const;

export const TAG_NAMES = [
  'VIP', 'Beta tester', 'Churn risk', 'Enterprise trial', 'Feature request', 'Bug', 'Billing issue', 'Onboarding', 'Upsell', 'NPS promoter',
  'NPS detractor', 'Integration: Slack', 'Integration: Salesforce', 'Mobile user', 'Webinar attendee', 'Partner', 'Refund requested',
  'Priority support', 'Product feedback', 'Conference lead', 'Needs follow-up', 'Annual plan', 'Legacy pricing', 'Security review', 'Case study',
] as const;

/** Segment name, person_type (OpenAPI enum: contact = leads, user = users), membership rule id. */
export const SEGMENTS = [
  ['All users', 'user', 'all_users'],
  ['All leads', 'contact', 'all_leads'],
  ['Active', 'user', 'active'],
  ['New', 'user', 'new'],
  ['Slipping away', 'user', 'slipping'],
  ['Unsubscribed from email', 'user', 'unsubscribed'],
  ['Mobile app users', 'user', 'mobile'],
  ['Leads from paid campaigns', 'contact', 'paid_leads'],
] as const;

export const SUBJECTS = [
  'Cannot log in after password reset', 'Question about my invoice', 'How do I export my data?', 'Feature request: dark mode',
  'Integration with Salesforce not syncing', 'Upgrade to annual plan', 'Charged twice this month', 'API rate limit errors',
  'Adding teammates to our workspace', 'Mobile app crashes on launch', 'SSO setup with Okta', 'Cancel my subscription',
  'Webhook deliveries failing', 'Change billing email', 'GDPR data deletion request', 'Slow dashboard loading',
] as const;

export const MESSAGES = [
  'Hi there, I reset my password but the login page keeps saying my credentials are invalid. Can you help?',
  'Hello! Could you send me a copy of last month\'s invoice with our VAT number on it?',
  'Is there a way to export all of our projects to CSV? I could not find it in settings.',
  'We would love a dark mode for the dashboard — our team works late a lot.',
  'Our Salesforce integration stopped syncing contacts yesterday afternoon.',
  'We are thinking about switching to the annual plan. What discount would we get?',
  'It looks like we were charged twice for March. Could you check?',
  'Our integration is getting 429 responses since this morning; what are the limits?',
  'How do I invite three more teammates without upgrading?',
  'The iOS app crashes right after the splash screen on iOS 17.5.',
  'We want to enforce SSO through Okta for everyone in the workspace.',
  'Please cancel our subscription at the end of the billing period.',
] as const;

export const REPLIES = [
  'Thanks for reaching out! I\'m looking into this for you now.',
  'Could you share a screenshot of the error you\'re seeing?',
  'I\'ve passed this on to our engineering team and will update you as soon as I hear back.',
  'Good news — that should be fixed now. Could you try again?',
  'I\'ve refunded the duplicate charge; it can take 5-10 business days to appear.',
  'Here\'s a link to our help article that walks through the steps.',
  'Happy to help! Is there anything else I can do for you today?',
  'Thanks, that worked perfectly!',
  'Perfect, thank you so much for the quick reply.',
  'Still seeing the same issue, unfortunately.',
] as const;

export const NOTE_BODIES = [
  'Spoke with them on a call: evaluating the Enterprise plan for Q3.',
  'Reported the CSV export bug; linked to JIRA PROJ-1432.',
  'Prefers to be contacted by email, not phone.',
  'Key decision maker for the renewal. Budget approved.',
  'Asked for a security questionnaire — sent the SOC 2 report.',
  'Churn risk: usage dropped 40% over the last month.',
  'Great candidate for a case study, very happy with onboarding.',
  'Follow up after their team offsite next week.',
] as const;

export const ARTICLE_TITLES = [
  'How to issue a refund', 'Escalation policy for priority customers', 'Handling GDPR deletion requests', 'Troubleshooting SSO with Okta',
  'Pricing and discount approval matrix', 'Known issues: iOS app 4.2', 'Responding to security questionnaires', 'Setting up webhooks for customers',
  'Onboarding checklist for Enterprise accounts', 'Macros for billing questions', 'When to involve engineering', 'Tone of voice guidelines',
  'Migrating customers from legacy pricing', 'Handling abusive conversations', 'Holiday support rota',
] as const;

export const UTM_SOURCES = ['google', 'linkedin', 'newsletter', 'twitter', 'capterra', 'g2'] as const;
export const UTM_MEDIUMS = ['cpc', 'social', 'email', 'referral'] as const;
export const UTM_CAMPAIGNS = ['spring_launch', 'webinar_q2', 'retargeting', 'brand', 'partner_promo'] as const;

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
