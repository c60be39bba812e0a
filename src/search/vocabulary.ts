/**
 * The fuzzy search vocabulary of a scope: words written with their deletion variants (on
 * upsert), and the vocabulary words within a fuzzy query word's typo distance (on search).
 */
import { sql } from 'kysely';
import type { Executor } from './dialect.ts';
import type { Filter } from './query.ts';
import type { StoreContext } from './store-context.ts';
import { allowedTypos, deletionVariants, typoDistance, vocabularyDepth } from './text.ts';

/** Known vocabulary words remembered per scope, to skip re-inserting them on every batch. */
const VOCAB_CACHE_LIMIT = 200_000;

function fuzzyWords(f: Filter | undefined, out: Set<string>): Set<string> {
  if (f === undefined) return out;
  if (f.op === 'and' || f.op === 'or') for (const i of f.items) fuzzyWords(i, out);
  else if (f.op === 'not') fuzzyWords(f.item, out);
  else if (f.op === 'fuzzy') for (const w of f.words) if (allowedTypos(w) > 0) out.add(w);
  return out;
}

export async function addVocabulary(store: StoreContext, db: Executor, scopeId: number, words: Set<string>): Promise<void> {
  let known = store.vocabCache.get(scopeId);
  if (known === undefined || known.size > VOCAB_CACHE_LIMIT) {
    known = new Set();
    store.vocabCache.set(scopeId, known);
  }
  const fresh = [...words].filter((w) => !known.has(w));
  if (fresh.length === 0) return;
  const added = await store.dialect.insertVocabulary(db, scopeId, fresh);
  const pairs: [string, string][] = [];
  for (const w of added) for (const v of deletionVariants(w, vocabularyDepth(w))) pairs.push([v, w]);
  await store.dialect.insertVariants(db, scopeId, pairs);
  for (const w of fresh) known.add(w);
}

/** For each fuzzy query word that allows typos: itself and the vocabulary words within its typo distance. */
export async function fuzzyCandidates(store: StoreContext, scopeId: number, filter: Filter | undefined): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const queryWords = [...fuzzyWords(filter, new Set())];
  if (queryWords.length === 0) return out;
  const variants = new Set<string>();
  for (const w of queryWords) for (const v of deletionVariants(w, allowedTypos(w))) variants.add(v);
  const { rows } = await sql<{ word: string }>`
    SELECT DISTINCT word FROM search_variants WHERE scope_id = ${scopeId} AND ${store.dialect.inList(sql.ref('variant'), [...variants], 'text')}`.execute(
    store.db,
  );
  for (const w of queryWords) {
    const d = allowedTypos(w);
    out.set(w, [w, ...rows.map((r) => r.word).filter((x) => x !== w && typoDistance(w, x, d) <= d)]);
  }
  return out;
}
