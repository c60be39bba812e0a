/**
 * The record store both front ends keep: per resource (or object type) a table of records by id
 * and the number created through the API so far, the PRNG stream that draws new ids.
 */
import { mixSeed, seededRandom } from '../sim-server.ts';
import { hashString } from './values.ts';

export interface Table<R> {
  records: Map<string, R>;
  /** Records created through the API so far (the PRNG stream of new ids). */
  created: number;
}

/** Most records a table keeps unless the caller says otherwise. */
export const MAX_RECORDS = 100_000;

/** The PRNG of a table's seeded records: the same seed and name always draw the same records. */
export function seedRandom(seed: number, name: string, salt?: number): () => number {
  return seededRandom(salt === undefined ? mixSeed(seed, hashString(name)) : mixSeed(seed, hashString(name), salt));
}

/** The PRNG of the next record created in a table (counts it). */
export function creationRandom(seed: number, name: string, table: Table<unknown>): () => number {
  return seededRandom(mixSeed(seed, hashString(name), ++table.created));
}

/** A fresh id for a table: drawn from the creation stream until no record holds it. */
export function mintId(seed: number, name: string, table: Table<unknown>, draw: (rand: () => number) => string | number): string | number {
  let id = draw(creationRandom(seed, name, table));
  while (table.records.has(String(id))) id = draw(creationRandom(seed, name, table));
  return id;
}
