/**
 * The README's shell snippets fail loudly and say why: a quick-start request that the service
 * refuses (here a typo'd connector type) makes the snippet fail and print the service's error
 * body, not an empty `no "id" in:`. The snippet is taken from the README as written, with the
 * helpers of scripts/quickstart.sh sourced as the README says, and run against a service
 * harness: its URL given as $SB, as a reader moves the port.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../service/helpers.ts';

const ROOT = new URL('../../', import.meta.url);
/** Every documentation file with shell snippets a reader runs. */
const FILES = ['README.md', 'docs/quick-start.md', 'docs/library.md', 'docs/mcp.md', 'docs/connector-walkthrough.md', 'docs/airbyte.md'];
const shellBlocks = (file: string): string[] => [...readFileSync(new URL(file, ROOT), 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');

/** The README command that starts at the line matching `start`, with its backslash continuations. */
function command(start: RegExp): string {
  for (const block of shellBlocks('README.md')) {
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
    const create = command(/^CONNECTOR=\$\(curl /).replace('"connector_type":"granola"', '"connector_type":"granolla"');
    expect(create).toContain('granolla');
    expect(create).toContain('$SB/api/v1/'); // the one base-URL variable, no port of its own
    const qs = mkdtempSync(join(tmpdir(), 'sb-snippet-'));
    // Asynchronously: the service answering curl runs in this process.
    const r = await promisify(execFile)('bash', ['-c', `set -eo pipefail\n. scripts/quickstart.sh\nTOKEN='${token}'\n${create}\necho "created $CONNECTOR"`], {
      encoding: 'utf8',
      cwd: ROOT,
      env: { ...process.env, SB: h.url, QS: qs },
    }).then(
      (ok) => ({ status: 0, ...ok }),
      (e: { code: number; stdout: string; stderr: string }) => ({ status: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain('created');
    expect(r.stdout + r.stderr).toContain('unknown_connector_type');
    expect(r.stdout + r.stderr).toMatch(/Unknown connector type|granolla/);
  });

  it.each(FILES)('%s: no request whose answer is used hides its error body (-f without --fail-with-body); readiness polls may', (file) => {
    for (const block of shellBlocks(file)) {
      for (const line of block.split('\n')) {
        if (!/\bcurl\b/.test(line) || /\buntil curl\b/.test(line)) continue;
        expect(line, line).not.toMatch(/\bcurl\s+(-\w*f\w*\s|--fail\s)/);
      }
    }
  });

  it.each(FILES)('%s: no fixed address of the service or a simulator in a snippet: each comes from one variable', (file) => {
    for (const block of shellBlocks(file)) {
      for (const line of block.split('\n')) {
        // A port written into a URL is allowed only as a variable's default (${VAR:-3000}), or in a comment.
        const code = line.replace(/(^|\s)#.*$/, '');
        expect(code, `${file}: ${line}`).not.toMatch(/127\.0\.0\.1:\d|localhost:\d/);
      }
    }
  });
});
