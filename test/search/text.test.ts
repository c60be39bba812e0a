/** Text primitives: words, typo distance and its deletion index, like patterns, string order. */
import { describe, expect, it } from 'vitest';
import {
  allowedTypos,
  compareStrings,
  deletionVariants,
  gramToken,
  likeToGlob,
  likeToRegExp,
  likeToSqlLike,
  likeTrigrams,
  parseLike,
  textTrigrams,
  typoDistance,
  vocabularyDepth,
  words,
} from '../../src/search/text.ts';
import { rng } from './fixtures.ts';

describe('words', () => {
  it.each([
    ['john.smith@example.com', ['john', 'smith', 'example', 'com']],
    ['Hello, WORLD! 42x', ['hello', 'world', '42x']],
    ['under_score and-dash', ['under', 'score', 'and', 'dash']],
    ['Zoë Ångström straße', ['zoë', 'ångström', 'straße']],
    ['ﬁle Ｆｕｌｌ', ['file', 'full']],
    ['東京 😀 tokyo', ['東京', 'tokyo']],
    ['', []],
    ['   ...   ', []],
  ])('%j', (text, expected) => {
    expect(words(text)).toEqual(expected);
  });

  it('cuts long words to 64 characters and caps the count', () => {
    expect(words('a'.repeat(100))[0]).toHaveLength(64);
    expect(words('a b c d', 2)).toEqual(['a', 'b']);
  });
});

describe('typo distance', () => {
  it.each([
    ['smith', 'smith', 0],
    ['smith', 'smyth', 1],
    ['john', 'jhon', 1],
    ['john', 'jon', 1],
    ['kristopher', 'christopher', 2],
    ['abc', 'xyz', 3],
  ])('%s / %s = %i', (a, b, d) => {
    expect(typoDistance(a, b, 5)).toBe(d);
    expect(typoDistance(b, a, 5)).toBe(d);
  });

  it('stops early beyond the maximum', () => {
    expect(typoDistance('aaaaaaaa', 'bbbbbbbb', 2)).toBe(3);
  });

  it.each([
    ['bob', 0],
    ['john', 1],
    ['smithes', 1],
    ['smithers', 2],
    ['x1234', 0],
  ])('allows %s %i typos', (word, n) => {
    expect(allowedTypos(word)).toBe(n);
  });

  it('finds every word within the allowed distance through shared deletion variants', () => {
    // Symmetric delete: a stored word's variants (vocabularyDepth) meet a query word's variants
    // (allowedTypos) whenever the two are within the query word's typo distance.
    const r = rng(11);
    const letters = 'abcde';
    const randomWord = (): string => Array.from({ length: 3 + Math.floor(r() * 8) }, () => letters[Math.floor(r() * letters.length)]).join('');
    const vocabulary = Array.from({ length: 400 }, randomWord);
    for (let i = 0; i < 200; i++) {
      const q = randomWord();
      const d = allowedTypos(q);
      const qv = new Set(deletionVariants(q, d));
      for (const w of vocabulary) {
        const within = typoDistance(q, w, d) <= d;
        const found = deletionVariants(w, vocabularyDepth(w)).some((v) => qv.has(v));
        if (within) expect(found, `${q} ~ ${w}`).toBe(true);
      }
    }
  });
});

describe('like patterns', () => {
  it.each([
    ['%smith%', '*smith*', '%smith%', ['john smith', 'smith'], ['smyth']],
    ['j_n', 'j?n', 'j_n', ['jon', 'jän'], ['john', 'jn']],
    ['100\\%', '100%', '100\\%', ['100%'], ['1000']],
    ['a\\_b', 'a_b', 'a\\_b', ['a_b'], ['axb']],
    ['back\\\\slash', 'back\\slash', 'back\\\\slash', ['back\\slash'], ['backslash']],
    ['what?*[x]', 'what[?][*][[]x]', 'what?*[x]', ['what?*[x]'], ['whatx']],
    ['%%a%%', '*a*', '%a%', ['a', 'bab'], ['b']],
  ])('%s', (pattern, glob, sqlLike, yes, no) => {
    const parts = parseLike(pattern);
    expect(likeToGlob(parts)).toBe(glob);
    expect(likeToSqlLike(parts)).toBe(sqlLike);
    const re = likeToRegExp(parts);
    for (const s of yes) expect(re.test(s), s).toBe(true);
    for (const s of no) expect(re.test(s), s).toBe(false);
  });

  it('takes trigrams from literal runs of three or more characters', () => {
    expect(likeTrigrams(parseLike('%ab%'))).toEqual([]);
    expect(likeTrigrams(parseLike('%garciaford%'))).toEqual(['gar', 'cia', 'for', 'ord']);
    expect(likeTrigrams(parseLike('東京都%'))).toEqual(['東京都']);
  });
});

describe('trigram tokens', () => {
  it('are [0-9a-z_] only, one per distinct (field, trigram), and every like trigram of a matching value is among them', () => {
    const texts = ['john.smith@example.com', 'straße 東京 😀', 'a_b%c "q"', '1_2', '_1_2', 'ab_', 'x😀y'];
    const tokens = new Map<string, string>();
    for (const field of [3, 31]) {
      for (const text of texts) {
        for (const t of textTrigrams(text)) {
          const token = gramToken(field, t);
          expect(token).toMatch(/^[0-9a-z_]+$/);
          // Injective: no two (field, trigram) pairs share a token.
          const key = `${field}:${t}`;
          expect(tokens.get(token) ?? key).toBe(key);
          tokens.set(token, key);
        }
      }
    }
    expect(gramToken(3, 'smi')).toBe('3_smi');
    for (const text of texts) {
      const all = textTrigrams(text);
      for (const t of likeTrigrams(parseLike(`%${text.slice(1)}%`))) expect(all.has(t)).toBe(true);
    }
  });
});

describe('string order', () => {
  it('is Unicode code point order (UTF-8 byte order), as SQLite BINARY and PostgreSQL "C"', () => {
    const r = rng(3);
    const pool = ['a', 'B', 'é', '\uffff', '\ue000', '😀', '𝐀', 'z', '東', ' '];
    const strings = Array.from({ length: 300 }, () => Array.from({ length: 1 + Math.floor(r() * 4) }, () => pool[Math.floor(r() * pool.length)]).join(''));
    const byBytes = [...strings].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...strings].sort(compareStrings)).toEqual(byBytes);
  });
});
