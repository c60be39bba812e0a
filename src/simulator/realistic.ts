/**
 * Realistic values in sampled records. openapi-sampler fills a schema without examples with
 * placeholders: "string" for any text, user@example.com, http://example.com, a fixed UUID, and
 * `{property1, property2}` for a map. Seeded and created records take values shaped by each
 * field's name instead (a person's name and email, a city, a sentence for a description), drawn
 * from a faker seeded per record, so one seed always serves the same records. Values the
 * description's own examples give are kept as they are: only the sampler's placeholders change.
 */
import { faker as shared } from '@faker-js/faker/locale/en';

type Json = Record<string, unknown>;
type Faker = typeof shared;

/** What openapi-sampler writes where a schema has no example (by type and format). */
const PLACEHOLDERS = new Set([
  'string',
  'user@example.com',
  'http://example.com',
  'https://example.com',
  'example.com',
  '497f6eca-6276-4993-bfeb-53cbbbba6f08',
  'pa$$word',
]);

/** A map the sampler made of `additionalProperties`: its two made-up keys, nothing else. */
const isSampledMap = (v: Json): boolean => {
  const keys = Object.keys(v);
  return keys.length === 2 && keys[0] === 'property1' && keys[1] === 'property2';
};

/** The person a record is about (a name and an email that agree), drawn once per record. */
interface Person {
  first: string;
  last: string;
}

/** A value for a text field by its name (lower case, the last word of a dotted or snake name first). */
function textFor(name: string, f: Faker, person: Person, personal: boolean | 'product'): string {
  const n = name.toLowerCase();
  const is = (re: RegExp): boolean => re.test(n);
  if (is(/e_?mail/)) return f.internet.email({ firstName: person.first, lastName: person.last, provider: 'example.com' }).toLowerCase();
  if (is(/^(first_?name|given_?name|firstname)$/)) return person.first;
  if (is(/^(last_?name|family_?name|surname|lastname)$/)) return person.last;
  if (is(/^(company|company_?name|organization|organisation|org_?name|business_?name)$/)) return f.company.name();
  if (is(/^(name|full_?name|display_?name|real_?name|contact_?name|account_?holder_?name)$/))
    return personal === 'product' ? f.commerce.productName() : personal ? `${person.first} ${person.last}` : f.company.name();
  if (is(/(^|_)(login|username|user_?name|handle|screen_?name|nickname)$/))
    return f.internet.username({ firstName: person.first, lastName: person.last }).toLowerCase();
  if (is(/phone|mobile|fax/)) return f.phone.number({ style: 'international' });
  if (is(/(^|_)city$|locality/)) return f.location.city();
  if (is(/(^|_)country(_code)?$/)) return f.location.countryCode();
  if (is(/(^|_)(state|province|region)$/)) return f.location.state({ abbreviated: true });
  if (is(/postal|zip/)) return f.location.zipCode();
  if (is(/(line1|street|address1|address_?line_?1)$/)) return f.location.streetAddress();
  if (is(/(line2|address2|address_?line_?2)$/)) return f.location.secondaryAddress();
  if (is(/currency/)) return 'usd';
  if (is(/(time_?zone|tz)$/)) return f.location.timeZone();
  if (is(/locale|language/)) return 'en';
  if (is(/colou?r/)) return f.color.rgb();
  if (is(/domain|hostname/)) return f.internet.domainName();
  if (is(/(^|_)(url|uri|href|link|website|homepage|avatar)/) || is(/_(url|uri)$/)) return f.internet.url();
  if (is(/^(title|subject|headline|summary|label)$/)) return f.company.catchPhrase();
  if (is(/(description|body|text|content|note|comment|message|bio|details|about|footer)$/)) return f.hacker.phrase();
  if (is(/(^|_)(id|uuid|guid|key|token|fingerprint|sku)$/) || is(/_ids?$/)) return f.string.alphanumeric(14);
  if (is(/(^|_)(type|kind|status|state|role|category|method|mode)$/)) return f.word.noun();
  return f.word.words({ count: { min: 1, max: 3 } });
}

/** Replace the sampler's placeholders in `value` (walked in place), each leaf by its field's name. */
function walk(value: unknown, name: string, f: Faker, person: Person, personal: boolean | 'product', depth: number): unknown {
  if (depth > 32) return value;
  if (typeof value === 'string') return PLACEHOLDERS.has(value) ? textFor(name, f, person, personal) : value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = walk(value[i], name, f, person, personal, depth + 1);
    return value;
  }
  if (value !== null && typeof value === 'object') {
    const obj = value as Json;
    if (isSampledMap(obj)) return {};
    // A nested object with an email of its own (an owner, a shipping contact) is another person.
    const own = typeof obj['email'] === 'string' || typeof obj['login'] === 'string' ? { first: f.person.firstName(), last: f.person.lastName() } : person;
    const ownPersonal = own !== person || personal;
    for (const [k, v] of Object.entries(obj)) obj[k] = walk(v, k, f, own, ownPersonal, depth + 1);
    return obj;
  }
  return value;
}

/**
 * Fill the sampler's placeholders of a record (in place, and returned) with realistic values drawn
 * from a faker seeded by `seed`: the same seed gives the same values. A record with an email (or a
 * login) is a person's: its `name` is that person's; a record of a resource named like goods
 * (products, items, plans, prices) has a product's name; otherwise `name` is a company's.
 */
export function realisticRecord<T>(record: T, seed: number, resource = ''): T {
  if (record === null || typeof record !== 'object') return record;
  shared.seed(seed);
  const person = { first: shared.person.firstName(), last: shared.person.lastName() };
  const obj = record as Json;
  const personal =
    'email' in obj || 'login' in obj || 'first_name' in obj || 'last_name' in obj || (/product|item|plan|price|sku|goods/i.test(resource) ? 'product' : false);
  return walk(record, '', shared, person, personal, 0) as T;
}
