/**
 * The pool that runs json-schema-to-typescript on this thread and a worker (src/codegen/schema-pool.ts):
 * the same text wherever a batch ran, every batch answered, and a batch the library refuses
 * rejected with its error (tried again here when the worker refused it, so no batch is lost).
 */
import { describe, expect, it } from 'vitest';
import { compileHere, SchemaPool, type SchemaBatch } from '../../src/codegen/schema-pool.ts';

const options = { bannerComment: '', format: false, additionalProperties: false };
const batch = (i: number): SchemaBatch => ({
  inputs: [
    { type: 'object', title: `Rec${i}`, properties: { id: { type: 'string' }, n: { type: 'integer', enum: [i, i + 1] } }, required: ['id'] },
    { type: 'array', title: `List${i}`, items: { type: 'string' } },
  ],
  names: [`Rec${i}`, `List${i}`],
  options,
});

describe('SchemaPool', () => {
  it('answers every batch, queued in one tick, with the text this thread makes for it', async () => {
    const pool = new SchemaPool();
    const batches = Array.from({ length: 8 }, (_, i) => batch(i));
    const pooled = await Promise.all(batches.map((b) => pool.compile(b)));
    const here = await Promise.all(batches.map((b) => compileHere(b)));
    expect(pooled).toEqual(here);
    expect(pooled[3]![0]).toContain('export interface Rec3');
    // Asked again after the first drain: a new drain answers.
    expect(await pool.compile(batch(9))).toEqual(await compileHere(batch(9)));
  });

  it('warm() starts the worker before any batch: the same answers, and close() stops it whether used or not', async () => {
    const used = new SchemaPool();
    used.warm();
    const batches = Array.from({ length: 6 }, (_, i) => batch(i));
    expect(await Promise.all(batches.map((b) => used.compile(b)))).toEqual(await Promise.all(batches.map((b) => compileHere(b))));
    used.close();
    const unused = new SchemaPool();
    unused.warm();
    unused.close();
    // Warm with threads off: nothing to start, still answers.
    const here = new SchemaPool(false);
    here.warm();
    expect(await here.compile(batch(1))).toEqual(await compileHere(batch(1)));
  });

  it('hold(): the worker answers alone until release(); close() refuses what is still waiting and what comes after', async () => {
    const pool = new SchemaPool();
    pool.warm();
    pool.hold();
    const held = await Promise.all([pool.compile(batch(1)), pool.compile(batch(2)), pool.compile(batch(3))]);
    expect(held).toEqual([await compileHere(batch(1)), await compileHere(batch(2)), await compileHere(batch(3))]);
    const after = [pool.compile(batch(4)), pool.compile(batch(5))];
    pool.release();
    expect(await Promise.all(after)).toEqual([await compileHere(batch(4)), await compileHere(batch(5))]);
    const dropped = Array.from({ length: 6 }, (_, i) => pool.compile(batch(i)));
    pool.close();
    const settled = await Promise.allSettled(dropped);
    // Each is answered or refused (none left hanging); whatever was not yet answered is refused.
    expect(settled.filter((r) => r.status === 'rejected').length).toBeGreaterThan(0);
    await expect(pool.compile(batch(1))).rejects.toThrow(/closed/);
  });

  it('rejects a batch the library refuses, and answers the others', async () => {
    const pool = new SchemaPool();
    const bad: SchemaBatch = { inputs: [{ $ref: '#/definitions/nowhere', title: 'Bad' }], names: ['Bad'], options };
    const results = await Promise.allSettled([pool.compile(batch(1)), pool.compile(bad), pool.compile(batch(2)), pool.compile(bad)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error);
  });
});
