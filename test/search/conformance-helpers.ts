/** Shared by conformance*.test.ts: the store under test, seeded with RECORDS, and the names its cases use. */
import { expect } from 'vitest';
import { isSwitchboardError } from '../../src/errors/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { DEF, RECORDS } from './fixtures.ts';
import { allSearchIds, referenceIds, type DialectCase, type TestDatabase } from './helpers.ts';

export const C = 'conn-1';
export const E = 'people';
export type Params = Record<string, unknown>;

export const allIds = (store: RecordStore, params: Params, entity = E, connector = C): Promise<string[]> => allSearchIds(store, connector, entity, DEF, params);
export const reference = (records: Record<string, unknown>[], params: Params): string[] => referenceIds(records, DEF, params);

/** Opens a test database of one dialect and a store on it holding RECORDS as connector C's entity E. */
export async function openConformanceStore(open: DialectCase[1]): Promise<{ t: TestDatabase; store: RecordStore }> {
  const t = await open();
  const store = new RecordStore(t.database, { cursorSecret: 'test-cursor-secret' });
  await store.upsert(C, E, DEF, RECORDS, 'run-1');
  return { t, store };
}

/** Awaits a search that must fail with a 400 of this code; returns its errors. */
export async function expectError(p: Promise<unknown>, code: string): Promise<{ path: string; message: string }[]> {
  try {
    await p;
  } catch (e) {
    expect(isSwitchboardError(e), String(e)).toBe(true);
    if (isSwitchboardError(e)) {
      expect(e.code).toBe(code);
      expect(e.status).toBe(400);
      return e.errors;
    }
  }
  throw new Error(`expected ${code}`);
}
