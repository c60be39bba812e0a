/** New ids shaped like the description's, and values kept as text. */

let lastTs = 0;
let lastMs = 0;
let lastSnowflakeMs = 0;
const SNOWFLAKE_EPOCH_MS = 1_420_070_400_000n;
/**
 * A fresh id shaped like the sampled one: a number, a Unix timestamp with microseconds (a chat
 * message ts: in the past when seeded, the current time when created, always increasing) or in
 * milliseconds as text (likewise), a thread id (19:<hex>@thread.tacv2), a
 * prefixed id (e.g. not_1d3tmYTlCICgjy), a mixed-case key (aBcD1234EfGh5678IjKl9M), a prefixed
 * upper-case id (e.g. C012AB3CD), a UUID, a long opaque base64 id (a mailbox item's), a small number
 * kept as text (as many digits, at least three), or a string of digits (Asana gids, numeric ids) or hex.
 */
export function newId(rand: () => number, like: unknown, created = false): string | number {
  if (typeof like === 'number') return 1 + Math.floor(rand() * 2_000_000_000);
  if (typeof like === 'string' && /^\d{10}\.\d{6}$/.test(like)) {
    if (!created) return `${1_600_000_000 + Math.floor(rand() * 80_000_000)}.${String(Math.floor(rand() * 1_000_000)).padStart(6, '0')}`;
    lastTs = Math.max(lastTs + 1, Date.now() * 1000);
    return `${Math.floor(lastTs / 1_000_000)}.${String(lastTs % 1_000_000).padStart(6, '0')}`;
  }
  // Epoch milliseconds as text (a Teams message id, its creation time): in the past when seeded, the current time when created, always increasing.
  if (typeof like === 'string' && /^1[5-9]\d{11}$/.test(like)) {
    if (!created) return String(1_600_000_000_000 + Math.floor(rand() * 80_000_000_000));
    lastMs = Math.max(lastMs + 1, Date.now());
    return String(lastMs);
  }
  // Hex digits between a numeric type prefix and a domain suffix (a thread id, 19:<hex>@thread.tacv2): the same prefix, length and suffix.
  const thread = typeof like === 'string' ? /^(\d{1,3}:)([0-9a-f]{16,})(@[a-z0-9.]+)$/.exec(like) : null;
  if (thread !== null)
    return (
      (thread[1] as string) + Array.from({ length: (thread[2] as string).length }, () => Math.floor(rand() * 16).toString(16)).join('') + (thread[3] as string)
    );
  // A lower-case word and a colon before a base64url key (id:a4ayc_80_OEAAAAAAAAAXw, dbid:AAH4f99T...): the same prefix and length.
  const colon = typeof like === 'string' ? /^([a-z]{2,8}:)([A-Za-z0-9_-]{12,})$/.exec(like) : null;
  if (colon !== null) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
    return (colon[1] as string) + Array.from({ length: (colon[2] as string).length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  // A lower-case prefix and letters and digits (e.g. not_1d3tmYTlCICgjy): the same prefix and length.
  const prefixed = typeof like === 'string' ? /^([a-z]{2,8}_)([A-Za-z0-9]{8,})$/.exec(like) : null;
  if (prefixed !== null) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    return (prefixed[1] as string) + Array.from({ length: (prefixed[2] as string).length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  // Two capitals and 32 hex digits (SM0123...), or a letter and a dash before them (a dynamic template's d-f43d...): the same prefix, new digits.
  const hexPrefixed = typeof like === 'string' ? /^([A-Z]{2}|[a-z]-)[0-9a-f]{32}$/.exec(like) : null;
  if (hexPrefixed !== null) return (hexPrefixed[1] as string) + Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  // A UUID in braces (Bitbucket's {7a1f2c3d-...}): a version 4 UUID in braces.
  if (typeof like === 'string' && /^\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$/i.test(like))
    return `{${String(newId(rand, like.slice(1, -1)))}}`;
  // A UUID (a schema's format: uuid): a version 4 UUID.
  if (typeof like === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(like)) {
    const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[parseInt(hex[16]!, 16) % 4]}${hex.slice(17, 20)}-${hex.slice(20)}`;
  }
  // An 18-character case-safe id: a three-character key prefix (digits and capitals, digit-led: 001, 00Q),
  // 12 letters and digits, and 3 characters spelling which of the first 15 are capitals: the same prefix.
  const caseSafe = typeof like === 'string' ? /^([0-9][0-9A-Z]{2})[A-Za-z0-9]{12}([A-Z0-5]{3})$/.exec(like) : null;
  if (caseSafe !== null && caseSafe[2] === caseSafeSuffix(like as string)) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const id15 = (caseSafe[1] as string) + Array.from({ length: 12 }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
    return id15 + caseSafeSuffix(id15);
  }
  // A digit-led three-character type prefix before a mixed-case key (Okta's 00u1f96ECLNVOKVMUSEA users, 0oa... apps): the same prefix and length.
  // So does a three-letter lower-case type before 14 of them (rec560UJdUtocSouk records, app... bases, tbl... tables).
  const typed = typeof like === 'string' ? (/^([0-9][0-9a-z][a-z])([A-Za-z0-9]{14,})$/.exec(like) ?? /^([a-z]{3})([A-Za-z0-9]{14})$/.exec(like)) : null;
  if (typed !== null && /[A-Z]/.test(typed[2] as string)) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    return (typed[1] as string) + Array.from({ length: (typed[2] as string).length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  // A long opaque base64 id (40 or more characters, some of them - _ + / or = padding, as mailbox item ids are):
  // the same prefix (the mailbox's part), a new tail of 16 characters, the padding kept.
  const opaque = typeof like === 'string' ? /^([A-Za-z0-9+/_-]{40,}?)(={0,2})$/.exec(like) : null;
  if (opaque !== null && /[-_+/=]/.test(like as string)) {
    const body = opaque[1] as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    return body.slice(0, -16) + Array.from({ length: 16 }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('') + (opaque[2] as string);
  }
  // A mixed-case key of letters and digits (e.g. a file key, aBcD1234EfGh5678IjKl9M): the same length and alphabet.
  if (typeof like === 'string' && /^[A-Za-z0-9]{16,}$/.test(like) && /[a-z]/.test(like) && /[A-Z]/.test(like)) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    return Array.from({ length: like.length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  // Capital letters only, 12 or more (Calendly's AAAAAAAAAAAAAAAA uuids): the same length.
  if (typeof like === 'string' && /^[A-Z]{12,}$/.test(like))
    return Array.from({ length: like.length }, () => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[Math.floor(rand() * 26)]).join('');
  // Digit-led capitals and digits, 20 or more (a drive item id, 01BYE5RZ6QN3ZWBTUFOFD3GSPGOHDJD36K, whose first 8 name the drive): those 8 kept, a new base32 tail.
  if (typeof like === 'string' && /^[0-9][A-Z0-9]{19,}$/.test(like) && /[A-Z]/.test(like)) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    return like.slice(0, 8) + Array.from({ length: like.length - 8 }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  if (typeof like === 'string' && /^[A-Z][A-Z0-9]{2,}$/.test(like) && /\d/.test(like)) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    return like[0] + Array.from({ length: Math.max(8, like.length - 1) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  // A small number kept as text (BambooHR's employee "112", request "1342"): as many digits, at least three.
  if (typeof like === 'string' && /^[1-9]\d{0,3}$/.test(like)) {
    const n = Math.max(3, like.length);
    return String(10 ** (n - 1) + Math.floor(rand() * 9 * 10 ** (n - 1)));
  }
  // A long number kept as text whose high bits read as a time since 2016 (a snowflake, 17 to 20
  // digits): time-ordered, milliseconds since 2015 shifted left by 22 bits over random low bits; in
  // the past when seeded, now when created (always increasing), so ids sort as the records were made.
  if (typeof like === 'string' && /^[1-9]\d{16,19}$/.test(like) && isSnowflake(like)) {
    const ms = created ? (lastSnowflakeMs = Math.max(lastSnowflakeMs + 1, Date.now())) : 1_600_000_000_000 + Math.floor(rand() * 80_000_000_000);
    return String(((BigInt(ms) - SNOWFLAKE_EPOCH_MS) << 22n) | BigInt(Math.floor(rand() * 4_194_304)));
  }
  // Any other 64-bit number kept as text (17 to 19 digits, a CRM's record id "5843104000000425001"): as many digits; else 16.
  const length = typeof like === 'string' && /^[1-9]\d{16,18}$/.test(like) ? like.length : 16;
  const digits = Array.from({ length }, (_, i) => Math.floor(rand() * (i === 0 ? 9 : 10)) + (i === 0 ? 1 : 0)).join('');
  return typeof like === 'string' && /^[0-9a-f]{20,}$/.test(like) && /[a-f]/.test(like) ? Buffer.from(digits).toString('hex').slice(0, like.length) : digits;
}

/** A copy of a value with its numbers and booleans as text. */
export function leavesAsText(value: unknown, depth = 0): unknown {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || typeof value !== 'object' || depth > 32) return value;
  if (Array.isArray(value)) return value.map((v) => leavesAsText(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, leavesAsText(v, depth + 1)]));
}

const loose = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * The record field an item path's parameter names, the vendor's way: the field of that name in
 * any case (`{Sid}` → `sid`, `{InvoiceID}` → `InvoiceID`), the bare `id` of a `<singular>_id`
 * param, or `<Singular>ID` for a bare `{id}`; undefined when no field fits.
 */
export function idFieldFor(param: string | undefined, fields: readonly string[], singular: string): string | undefined {
  if (param === undefined || param === '') return undefined;
  const exact = fields.find((f) => f === param) ?? fields.find((f) => loose(f) === loose(param));
  if (exact !== undefined) return exact;
  const bare = /^(.*?)[_-]?(id|gid|uuid|sid|key)$/i.exec(param);
  if (bare !== null && fields.includes(bare[2]!.toLowerCase()) && (bare[1] === '' || loose(bare[1]!) === loose(singular))) return bare[2]!.toLowerCase();
  return /^(id|gid|uuid|sid|key)$/i.test(param) ? fields.find((f) => loose(f) === `${loose(singular)}${loose(param)}`) : undefined;
}

/** Whether a long number's high bits (above 22) read as a time between 2016 and 2035: a snowflake id. */
function isSnowflake(like: string): boolean {
  const ms = Number((BigInt(like) >> 22n) + SNOWFLAKE_EPOCH_MS);
  return ms >= Date.UTC(2016, 0, 1) && ms <= Date.UTC(2035, 0, 1);
}

/** The 3 characters an 18-character case-safe id adds to its first 15: per 5, a bit for each capital, as A-Z0-5. */
function caseSafeSuffix(id: string): string {
  let out = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) if (/[A-Z]/.test(id[chunk * 5 + i] as string)) bits |= 1 << i;
    out += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345'[bits];
  }
  return out;
}
