/**
 * Text primitives shared by indexing, query compilation and the in-memory reference evaluator.
 *
 * Every text rule (what a word is, case folding, like patterns, typo distance, string order) is
 * decided here in JavaScript, once, and both databases only ever compare pre-normalized values.
 * That is what makes SQLite and PostgreSQL return the same results: neither database's own
 * lower(), collation, tokenizer or similarity function takes part in matching.
 */

/** Strings are compared (eq/neq/in/gt/gte/lt/lte, sort) on their first 512 UTF-16 units. */
export const MAX_COMPARE_CHARS = 512;
/** `like` sees the first 10,000 UTF-16 units of a string value. */
export const MAX_LIKE_CHARS = 10_000;
/** Words longer than this are cut to this length, both when indexing and when querying. */
export const MAX_WORD_CHARS = 64;
/** Words of a single string value beyond this count are not indexed. */
export const MAX_WORDS_PER_VALUE = 10_000;
/** Fuzzy matching builds typo candidates only for letter-only words of 3 to 24 characters. */
export const MIN_FUZZY_VOCAB_CHARS = 3;
export const MAX_FUZZY_VOCAB_CHARS = 24;

/** Cut a string for comparisons without splitting a surrogate pair. */
export function compareKey(s: string): string {
  return cut(s, MAX_COMPARE_CHARS);
}

/** The lower-cased text `like` matches against. */
export function likeText(s: string): string {
  return cut(s, MAX_LIKE_CHARS).toLowerCase();
}

function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  // A high surrogate at the cut point would leave half a character behind.
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** Strip NUL characters: PostgreSQL text and JSON cannot hold them, so neither dialect keeps them. */
export function stripNul(s: string): string {
  return s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
}

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;
const ASCII_WORD = /[a-z0-9]+/g;

/**
 * The words of a text: NFKC-normalized, lower-cased runs of letters, digits and combining marks.
 * Everything else separates words, so `john.smith@example.com` has the words john, smith,
 * example, com. Words are cut to MAX_WORD_CHARS; at most `max` words are returned.
 */
export function words(text: string, max = MAX_WORDS_PER_VALUE): string[] {
  // ASCII text (most values) needs no normalization, and its letters and digits are [a-z0-9].
  const found = ASCII.test(text) ? text.toLowerCase().match(ASCII_WORD) : text.normalize('NFKC').toLowerCase().match(WORD);
  if (found === null) return [];
  if (found.length > max) found.length = max;
  for (let i = 0; i < found.length; i++) if (found[i]!.length > MAX_WORD_CHARS) found[i] = cut(found[i]!, MAX_WORD_CHARS);
  return found;
}

const LETTERS_ONLY = /^[\p{L}\p{M}]+$/u;

/** True when a word takes part in typo-tolerant matching (letters only; digits must match exactly). */
export function isFuzzyWord(word: string): boolean {
  return word.length >= MIN_FUZZY_VOCAB_CHARS && word.length <= MAX_FUZZY_VOCAB_CHARS && LETTERS_ONLY.test(word);
}

/** Typos allowed for a query word: 0 up to 3 characters, 1 for 4–7, 2 for 8 or more. Words with digits: 0. */
export function allowedTypos(word: string): number {
  if (!isFuzzyWord(word)) return 0;
  return word.length <= 3 ? 0 : word.length <= 7 ? 1 : 2;
}

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transposition, each counting 1),
 * or `max + 1` as soon as the distance is known to exceed `max`.
 */
export function typoDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a === b) return 0;
  const n = b.length;
  let prev2 = new Array<number>(n + 1).fill(0);
  let prev = Array.from({ length: n + 1 }, (_, j) => j);
  let cur = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[n]!;
}

/**
 * The word itself and every string obtained by deleting up to `depth` characters. Two words
 * within typo distance k share a deletion variant of depth k (the symmetric-delete method), so
 * storing the variants of every vocabulary word turns typo search into exact index lookups.
 */
export function deletionVariants(word: string, depth: number): string[] {
  const seen = new Set<string>([word]);
  let frontier = [word];
  for (let d = 0; d < depth; d++) {
    const next: string[] = [];
    for (const w of frontier) {
      for (let i = 0; i < w.length; i++) {
        const v = w.slice(0, i) + w.slice(i + 1);
        if (!seen.has(v)) {
          seen.add(v);
          next.push(v);
        }
      }
    }
    frontier = next;
  }
  return [...seen];
}

/** Deletion depth stored for a vocabulary word: enough for any query word that may match it. */
export function vocabularyDepth(word: string): number {
  // Query words of 8+ characters allow 2 typos and can reach words of 6+ characters; query
  // words of 4–7 characters allow 1 typo and can reach words of 3+ characters.
  return word.length >= 6 ? 2 : 1;
}

/**
 * One element of a parsed `like` pattern: a literal run of characters, `%` (any run) or `_`
 * (one character). A backslash makes the next character literal (`\%`, `\_`, `\\`).
 */
export type LikePart = { kind: 'text'; text: string } | { kind: 'any' } | { kind: 'one' };

/** Parse a like pattern (already lower-cased by the caller). */
export function parseLike(pattern: string): LikePart[] {
  const parts: LikePart[] = [];
  let text = '';
  const flush = (): void => {
    if (text !== '') parts.push({ kind: 'text', text });
    text = '';
  };
  const chars = [...pattern];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) {
      text += chars[++i]!;
    } else if (c === '%') {
      flush();
      // Consecutive % are one %.
      if (parts.at(-1)?.kind !== 'any') parts.push({ kind: 'any' });
    } else if (c === '_') {
      flush();
      parts.push({ kind: 'one' });
    } else {
      text += c;
    }
  }
  flush();
  return parts;
}

/** The longest literal run of a parsed pattern, in characters (trigram indexes need 3). */
export function longestLiteral(parts: LikePart[]): number {
  return Math.max(0, ...parts.map((p) => (p.kind === 'text' ? [...p.text].length : 0)));
}

/**
 * Trigrams (3 code points) of the pattern's literal runs of 3+ characters: every matching value
 * contains all of them, so they select candidate records from a trigram index. Non-overlapping
 * ones (plus each run's last) narrow about as well as all of them, and each one more costs a
 * posting-list merge.
 */
export function likeTrigrams(parts: LikePart[], max = 8): string[] {
  const out = new Set<string>();
  for (const p of parts) {
    if (p.kind !== 'text') continue;
    const cps = [...p.text];
    if (cps.length < 3) continue;
    for (let i = 0; i + 3 <= cps.length; i += 3) out.add(cps.slice(i, i + 3).join(''));
    out.add(cps.slice(-3).join(''));
  }
  return [...out].slice(0, max);
}

/**
 * The distinct trigrams (3 code points) of a lower-cased like text: what the per-field trigram
 * index holds for a string value, and what likeTrigrams looks up (each is one of these).
 */
export function textTrigrams(text: string, out: Set<string> = new Set()): Set<string> {
  if (ASCII.test(text)) {
    for (let i = 0; i + 3 <= text.length; i++) out.add(text.slice(i, i + 3));
    return out;
  }
  const cps = [...text];
  for (let i = 0; i + 3 <= cps.length; i++) out.add(cps[i]! + cps[i + 1]! + cps[i + 2]!);
  return out;
}

/**
 * A field's trigram as one token of [0-9a-z_] only (FTS5's ascii tokenizer keeps it whole):
 * `<field id>_` then each code point, a–z and 0–9 as themselves, any other as `_<base 36>_`.
 * Unambiguous, and cheaper than hex-encoding every trigram that holds a space or a dot.
 */
export function gramToken(fieldId: number, trigram: string): string {
  let out = `${fieldId}_`;
  for (let i = 0; i < trigram.length; i++) {
    const c = trigram.codePointAt(i)!;
    if (c > 0xffff) i++;
    out += (c >= 97 && c <= 122) || (c >= 48 && c <= 57) ? trigram[i]! : `_${c.toString(36)}_`;
  }
  return out;
}

/** The gram tokens of each field's trigrams (field id → trigrams, as textTrigrams collects them). */
export function gramTokens(byField: Map<number, Set<string>>): string[] {
  const out: string[] = [];
  for (const [id, trigrams] of byField) for (const t of trigrams) out.push(gramToken(id, t));
  return out;
}

/**
 * A LIKE pattern every text containing a match also matches: the literal runs in order with
 * `%` between, unanchored. Used against a record's text of all string values.
 */
export function relaxedLike(parts: LikePart[]): LikePart[] {
  const out: LikePart[] = [{ kind: 'any' }];
  for (const p of parts) if (p.kind === 'text') out.push(p, { kind: 'any' });
  return out;
}

/** SQLite GLOB form: case-sensitive (both sides are pre-lower-cased), `*` `?`, specials bracketed. */
export function likeToGlob(parts: LikePart[]): string {
  return parts.map((p) => (p.kind === 'any' ? '*' : p.kind === 'one' ? '?' : p.text.replace(/[*?[]/g, (c) => `[${c}]`))).join('');
}

/** PostgreSQL LIKE form with the default backslash escape; matched case-sensitively. */
export function likeToSqlLike(parts: LikePart[]): string {
  return parts.map((p) => (p.kind === 'any' ? '%' : p.kind === 'one' ? '_' : p.text.replace(/[\\%_]/g, (c) => `\\${c}`))).join('');
}

/** JavaScript form (the reference evaluator): an anchored regular expression over code points. */
export function likeToRegExp(parts: LikePart[]): RegExp {
  const body = parts.map((p) => (p.kind === 'any' ? '[^]*' : p.kind === 'one' ? '[^]' : p.text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 'u');
}

/**
 * Compare strings by Unicode code point, the order of SQLite's BINARY collation over UTF-8 and of
 * PostgreSQL's "C" collation (JavaScript's `<` compares UTF-16 units, which differs above U+FFFF).
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800–DFFF) encode code points above U+FFFF, which sort after U+E000–FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}
