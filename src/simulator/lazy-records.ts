/**
 * A resource's records generated on demand, for datasets too large to keep whole (a sandbox's
 * 100 000 seeded contacts): the store holds ids in stored order and a function that makes the
 * record of an id; a record is kept once the generic store takes it to change it (get, update),
 * and lists, searches and scrolls (through `source()`) render the others without keeping them.
 * It is the Map the OpenAPI simulator's store reads (`startOpenApiSimulator({records})`).
 */
import type { Json } from './description.ts';
import type { RecordSource } from './rules.ts';

export interface StoredEntry {
  record: Json;
  parents: Record<string, string>;
}

export class LazyRecords extends Map<string, StoredEntry> {
  private readonly ids: string[];
  private positions = new Map<string, number>();

  constructor(
    ids: string[],
    private readonly make: (id: string) => Json,
  ) {
    super();
    this.ids = [...ids];
    this.ids.forEach((id, i) => this.positions.set(id, i));
  }

  /** The record of an id without keeping it (a read that changes nothing). */
  peek(id: string): Json | undefined {
    return super.get(id)?.record ?? (this.positions.has(id) ? this.make(id) : undefined);
  }

  /** Whether the record is kept (taken by the store, so possibly changed) rather than generated afresh on each read. */
  isKept(id: string): boolean {
    return super.has(id);
  }

  override get(id: string): StoredEntry | undefined {
    const kept = super.get(id);
    if (kept !== undefined || !this.positions.has(id)) return kept;
    const entry = { record: this.make(id), parents: {} };
    super.set(id, entry);
    return entry;
  }

  override has(id: string): boolean {
    return this.positions.has(id);
  }

  override set(id: string, entry: StoredEntry): this {
    if (!this.positions.has(id)) {
      this.positions.set(id, this.ids.length);
      this.ids.push(id);
    }
    return super.set(id, entry);
  }

  override delete(id: string): boolean {
    const at = this.positions.get(id);
    if (at === undefined) return false;
    this.ids.splice(at, 1);
    this.positions = new Map(this.ids.map((x, i) => [x, i]));
    super.delete(id);
    return true;
  }

  override clear(): void {
    this.ids.length = 0;
    this.positions.clear();
    super.clear();
  }

  override get size(): number {
    return this.ids.length;
  }

  override *keys(): MapIterator<string> {
    yield* this.ids;
  }

  override *entries(): MapIterator<[string, StoredEntry]> {
    for (const id of this.ids) yield [id, super.get(id) ?? { record: this.make(id), parents: {} }];
  }

  override *values(): MapIterator<StoredEntry> {
    for (const [, v] of this.entries()) yield v;
  }

  override [Symbol.iterator](): MapIterator<[string, StoredEntry]> {
    return this.entries();
  }

  override forEach(fn: (value: StoredEntry, key: string, map: Map<string, StoredEntry>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }

  /** Position of an id in stored order, or -1. */
  indexOf(id: string): number {
    return this.positions.get(id) ?? -1;
  }

  /** The records in stored order as the sidecar's list, search and scroll rules read them, each through `render`. */
  source(render: (record: Json) => unknown = (r) => r): RecordSource {
    return {
      size: () => this.ids.length,
      slice: (start, end) => this.ids.slice(start, end).map((id) => render(this.peek(id) as Json)),
      indexOf: (id) => this.indexOf(id),
    };
  }
}
