import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../src/sandbox/granola/index.ts';

let sim: GranolaSimulator;
beforeAll(async () => {
  sim = await startGranolaSimulator({ size: 40, rateLimit: false });
});
afterAll(() => sim.close());

it('examples/library-mode.ts runs as the README says, against a simulator', async () => {
  const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/library-mode.ts'], {
      env: { ...process.env, GRANOLA_BASE_URL: sim.url, GRANOLA_API_KEY: sim.apiKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
  expect(out.code, out.stderr).toBe(0);
  expect(out.stdout).toContain('first page: 5 notes, has_more=true');
  expect(out.stdout).toMatch(/has \d+ transcript segments/);
  expect(out.stdout).toContain('all pages: 40 notes');
  expect(out.stdout).toContain('search: search_hosted_only');
});
