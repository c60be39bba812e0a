/** `switchboard check`: the credential check from the command line, against the Granola simulator. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

let sim: GranolaSimulator;
beforeAll(async () => {
  sim = await startGranolaSimulator({ size: 5, rateLimit: false });
});
afterAll(() => sim.close());

describe('switchboard check', () => {
  it('prints ok JSON and exits 0 for working credentials', async () => {
    const r = await runSwitchboard(['check', 'granola', '--credentials', JSON.stringify({ api_key: sim.apiKey }), '--base-url', sim.url]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, connector_type: 'granola', checked: true, info: {}, auth_variant: 'api_key' });
  });

  it('prints the failure as JSON and exits 1 for a wrong key (credentials from the environment)', async () => {
    const r = await runSwitchboard(['check', 'granola', '--base-url', sim.url], { SWITCHBOARD_CREDENTIALS: JSON.stringify({ api_key: 'grn_wrong' }) });
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout) as { ok: boolean; error: { code: string; message: string } };
    expect(out.ok).toBe(false);
    expect(out.error.code).toBe('upstream_credentials_rejected');
    expect(out.error.message).toContain('Invalid API key');
  });

  it('exits 1 with invalid_credentials when none are given', async () => {
    const r = await runSwitchboard(['check', 'granola'], { SWITCHBOARD_CREDENTIALS: '' });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error.code).toBe('invalid_credentials');
  });
});
