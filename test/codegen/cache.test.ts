/** Codegen's output cache: produced once per input, reused after, never mixing inputs. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedOutput } from '../../src/codegen/cache.ts';

describe('codegen output cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-codegen-cache-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it('produces once per input and returns the stored output after', async () => {
    const kind = `test-${randomUUID()}`;
    let calls = 0;
    const produce = (text: string) => async (): Promise<string> => {
      calls++;
      return text;
    };
    expect(await cachedOutput(kind, { a: 1 }, produce('first'), dir)).toBe('first');
    expect(await cachedOutput(kind, { a: 1 }, produce('not used'), dir)).toBe('first');
    expect(calls).toBe(1);
    // Another input (or kind) is another entry.
    expect(await cachedOutput(kind, { a: 2 }, produce('second'), dir)).toBe('second');
    expect(await cachedOutput(`${kind}-other`, { a: 1 }, produce('third'), dir)).toBe('third');
    expect(calls).toBe(3);
    expect(readdirSync(dir).filter((f) => f.endsWith('.txt'))).toHaveLength(3);
  });

  it('SWITCHBOARD_CODEGEN_CACHE=0 always generates', async () => {
    const kind = `test-${randomUUID()}`;
    process.env['SWITCHBOARD_CODEGEN_CACHE'] = '0';
    try {
      let calls = 0;
      const produce = async (): Promise<string> => String(++calls);
      expect(await cachedOutput(kind, 1, produce, dir)).toBe('1');
      expect(await cachedOutput(kind, 1, produce, dir)).toBe('2');
    } finally {
      delete process.env['SWITCHBOARD_CODEGEN_CACHE'];
    }
  });
});
