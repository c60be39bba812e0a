import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { runNode } from '../helpers/process.ts';

let sim: GranolaSimulator;
beforeAll(async () => {
  sim = await startGranolaSimulator({ size: 40, rateLimit: false });
});
afterAll(() => sim.close());

it('examples/library-mode.ts runs as the README says, against a simulator', async () => {
  const out = await runNode(['--import', 'tsx', 'examples/library-mode.ts'], { GRANOLA_BASE_URL: sim.url, GRANOLA_API_KEY: sim.apiKey });
  expect(out.code, out.stderr).toBe(0);
  expect(out.stdout).toContain('first page: 5 notes, has_more=true');
  expect(out.stdout).toMatch(/has \d+ transcript segments/);
  expect(out.stdout).toContain('all pages: 40 notes');
  expect(out.stdout).toContain('search: search_hosted_only');
});
