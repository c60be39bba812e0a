/**
 * Databases for the search tests: SQLite always (in memory), PostgreSQL when
 * SWITCHBOARD_TEST_POSTGRES_URL is set, each test file in a fresh schema dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { DIALECTS, dialectSkipReason, postgresAdmin } from '../helpers/dialects.ts';
import { migrate, openDatabase, type Database, type MigrationGroup } from '../../src/store/database.ts';
import { parseSearchParams, projectDocument, searchInMemory, searchMigrations, type RecordStore, type SearchEntityDef } from '../../src/search/index.ts';
import { expect } from 'vitest';

export const POSTGRES_URL = process.env['SWITCHBOARD_TEST_POSTGRES_URL'];

export interface TestDatabase {
  database: Database;
  close(): Promise<void>;
}

/** `open(groups)`: a fresh database with these migration groups applied (default: the search group). */
export type DialectCase = [name: 'sqlite' | 'postgres', open: (groups?: MigrationGroup[]) => Promise<TestDatabase>];

async function openSqlite(groups: MigrationGroup[] = [searchMigrations]): Promise<TestDatabase> {
  const database = openDatabase(':memory:');
  await migrate(database, groups);
  return { database, close: () => database.close() };
}

async function openPostgres(groups: MigrationGroup[] = [searchMigrations]): Promise<TestDatabase> {
  const schema = `search_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  // pg_trgm goes to public once, so that dropping a test schema never drops the extension
  // another test file is using. Concurrent creation may race: the loser's error is harmless.
  await postgresAdmin('CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public').catch(() => undefined);
  await postgresAdmin(`CREATE SCHEMA "${schema}"`);
  const url = new URL(POSTGRES_URL!);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  const database = openDatabase(url.toString(), { poolSize: 4 });
  await migrate(database, groups);
  return {
    database,
    close: async () => {
      await database.close();
      await postgresAdmin(`DROP SCHEMA "${schema}" CASCADE`);
    },
  };
}

/** A fresh database of the dialect, with these migration groups applied (default: the search group). */
export function openTestDatabase(dialect: 'sqlite' | 'postgres', groups?: MigrationGroup[]): Promise<TestDatabase> {
  return dialect === 'sqlite' ? openSqlite(groups) : openPostgres(groups);
}

/**
 * The dialects to run a suite on (test/helpers/dialects.ts: DIALECTS), each with its opener and
 * the reason it is skipped, for `describe.each`; describeEachDialect is the same loop for a suite
 * that takes the dialect's name.
 */
export function dialectCases(): (readonly [...DialectCase, string | undefined])[] {
  return DIALECTS.map((d) => [d, (groups?: MigrationGroup[]) => openTestDatabase(d, groups), dialectSkipReason(d)] as const);
}

/**
 * `db` seen through a proxy that counts the queries Kysely compiles for it (`counter.compiles`):
 * a search answered from remembered SQL compiles none.
 */
export function countingCompiles<DB>(db: Kysely<DB>): { db: Kysely<DB>; counter: { compiles: number } } {
  const counter = { compiles: 0 };
  const counting = new Proxy(db, {
    get(target, p) {
      if (p === 'getExecutor') {
        return () => {
          const ex = target.getExecutor();
          return new Proxy(ex, {
            get(e, q) {
              const v = Reflect.get(e, q) as unknown;
              if (q === 'compileQuery') return (...a: unknown[]) => (counter.compiles++, (v as (...b: unknown[]) => unknown).apply(e, a));
              return typeof v === 'function' ? (v as (...b: unknown[]) => unknown).bind(e) : v;
            },
          });
        };
      }
      const v = Reflect.get(target, p) as unknown;
      return typeof v === 'function' ? (v as (...b: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { db: counting, counter };
}

/** Every page of a search, following its cursors: the ids in order (each page's has_more agrees with its cursor). */
export async function allSearchIds(
  store: RecordStore,
  connector: string,
  entity: string,
  def: SearchEntityDef,
  params: Record<string, unknown>,
): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1000; guard++) {
    const page = await store.search(connector, entity, def, { ...params, ...(cursor === null ? {} : { cursor }) });
    out.push(...page.data.map((d) => String(d['id'])));
    cursor = page.meta.cursor;
    expect(page.meta.has_more).toBe(cursor !== null);
    if (cursor === null) return out;
  }
  throw new Error('too many pages');
}

/** The ids the in-memory reference search answers for these records, stored in this order. */
export function referenceIds(records: Record<string, unknown>[], def: SearchEntityDef, params: Record<string, unknown>): string[] {
  const docs = records.map((r, i) => ({ rid: i + 1, doc: projectDocument(r, def) }));
  return searchInMemory(docs, def, parseSearchParams(def, params)).map((d) => String(d.doc['id']));
}

/** Records as a store holds them, in rid order: an update keeps its place, a new record goes last; `reference` answers as the in-memory search. */
export class StoredRecords {
  readonly list: Record<string, unknown>[] = [];
  constructor(private readonly def: SearchEntityDef) {}
  upsert(recs: Record<string, unknown>[]): void {
    for (const rec of recs) {
      const at = this.list.findIndex((x) => x['id'] === rec['id']);
      if (at >= 0) this.list[at] = rec;
      else this.list.push(rec);
    }
  }
  delete(ids: string[]): void {
    for (const id of ids)
      this.list.splice(
        this.list.findIndex((x) => x['id'] === id),
        1,
      );
  }
  reference(params: Record<string, unknown>): string[] {
    return referenceIds(this.list, this.def, params);
  }
}
