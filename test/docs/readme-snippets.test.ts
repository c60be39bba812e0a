/**
 * The README's shell snippets fail loudly and say why: a quick-start request that the service
 * refuses (here a typo'd connector type) makes the snippet fail and print the service's error
 * body, not an empty `no "id" in:`. The snippet is taken from the README as written and run
 * against a service harness, the URL and token swapped in.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../service/helpers.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const shellBlocks = [...README.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');

/** The command that starts at the line matching `start`, with its backslash continuations. */
function command(start: RegExp): string {
  for (const block of shellBlocks) {
    const lines = block.split('\n');
    const i = lines.findIndex((l) => start.test(l));
    if (i < 0) continue;
    const out = [lines[i] ?? ''];
    for (let j = i; (lines[j] ?? '').trimEnd().endsWith('\\') || /\|\s*$/.test(lines[j] ?? ''); j++) out.push(lines[j + 1] ?? '');
    return out.join('\n');
  }
  throw new Error(`no README shell line matches ${String(start)}`);
}

describe('README shell snippets', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('sqlite');
  });
  afterAll(async () => {
    await h.service.close();
    await h.db.drop();
  });

  it("a refused request fails the snippet and shows the service's error body", async () => {
    const token = await h.token(await h.createApp('acme'));
    const json = command(/^json\(\) \{/);
    const create = command(/^CONNECTOR=\$\(curl /).replaceAll('http://127.0.0.1:3000', h.url).replace('"connector_type":"granola"', '"connector_type":"granolla"');
    expect(create).toContain('granolla');
    // Asynchronously: the service answering curl runs in this process.
    const r = await promisify(execFile)('bash', ['-c', `set -eo pipefail\n${json}\nTOKEN='${token}'\n${create}\necho "created $CONNECTOR"`], { encoding: 'utf8' }).then(
      (ok) => ({ status: 0, ...ok }),
      (e: { code: number; stdout: string; stderr: string }) => ({ status: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain('created');
    expect(r.stdout + r.stderr).toContain('unknown_connector_type');
    expect(r.stdout + r.stderr).toMatch(/Unknown connector type|granolla/);
  });

  it('no request whose answer is used hides its error body (-f without --fail-with-body); readiness polls may', () => {
    for (const block of shellBlocks) {
      for (const line of block.split('\n')) {
        if (!/\bcurl\b/.test(line) || /\buntil curl\b/.test(line)) continue;
        expect(line, line).not.toMatch(/\bcurl\s+(-\w*f\w*\s|--fail\s)/);
      }
    }
  });
});
