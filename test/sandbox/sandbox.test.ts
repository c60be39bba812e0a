import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { SANDBOX_PORT } from '../../src/cli/sandbox-command.ts';
import { SERVICE_SANDBOX_PORT } from '../../src/cli/serve-command.ts';
import { SIMULATE_PORT } from '../../src/cli/simulate-command.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { describedSimulators, printable, SIMULATORS, startSandbox, type Sandbox, type SandboxConnector } from '../../src/simulator/sandbox.ts';
import { freePortBlock } from '../helpers/ports.ts';

/**
 * The cheapest authenticated read per connector type, as the real API spells it. A simulator
 * added to the registry without a probe here fails the test, so each one is checked.
 */
const PROBES: Record<string, (c: SandboxConnector) => Promise<Response>> = {
  granola: (c) => fetch(`${c.base_url}/v1/notes?page_size=1`, { headers: { authorization: `Bearer ${c.credentials.api_key}` } }),
  // Intercom: GET /me returns the admin the token belongs to.
  intercom: (c) => fetch(`${c.base_url}/me`, { headers: { authorization: `Bearer ${c.credentials.access_token}`, accept: 'application/json' } }),
  // Monday: one GraphQL endpoint at /v2 (https://api.monday.com/v2), raw token in Authorization.
  monday: (c) =>
    fetch(`${c.base_url}/v2`, {
      method: 'POST',
      headers: { authorization: c.credentials.api_key ?? '', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { id } }' }),
    }),
};

describe('startSandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox.close());

  it('starts every simulator present and accounts for the rest', () => {
    const started = Object.keys(sandbox.connectors);
    expect(started).toContain('granola');
    expect([...started, ...sandbox.missing].sort()).toEqual(SIMULATORS.map((s) => s.type).sort());
  });

  it('returns working base URLs and credentials for each started simulator', async () => {
    const described = new Set(describedSimulators(join(import.meta.dirname, '../../connectors')).map((e) => e.type));
    for (const [type, connector] of Object.entries(sandbox.connectors)) {
      if (described.has(type)) {
        // Simulators from a vendor description: the manifest's own credential check must pass (a
        // connector whose API has no identity endpoint, Google Sheets', declares none: not checked).
        const loaded = getConnector(type);
        const declared = loaded.manifest.check !== undefined || loaded.manifest.auth.some((v) => v.check !== undefined);
        const runtime = new ConnectorRuntime(loaded, connector.credentials as never, { baseUrl: connector.base_url, retry: { maxAttempts: 1 } });
        await expect(runtime.check(), type).resolves.toMatchObject(declared ? { checked: true } : { ok: true, checked: false });
        continue;
      }
      const probe = PROBES[type];
      expect(probe, `no probe for ${type}`).toBeDefined();
      const res = await (probe as NonNullable<typeof probe>)(connector);
      expect(res.status, `${type} at ${connector.base_url}`).toBe(200);
      await res.arrayBuffer();
    }
    expect(sandbox.connectors.granola?.credentials).toEqual({ api_key: expect.stringMatching(/^grn_/) });
  });

  it('rejects requests without the credentials', async () => {
    const g = sandbox.connectors.granola as SandboxConnector;
    expect((await fetch(`${g.base_url}/v1/notes`)).status).toBe(401);
  });

  it('prints as JSON with the env var that points a connector at its simulator', () => {
    const g = sandbox.connectors.granola as SandboxConnector;
    const json = JSON.parse(JSON.stringify(sandbox)) as ReturnType<typeof printable>;
    expect(json).toEqual(printable(sandbox));
    expect(json.connectors.granola).toEqual({ ...g, env: { SWITCHBOARD_GRANOLA_BASE_URL: g.base_url } });
  });
});

describe('startSandbox options', () => {
  it('the default ports of sandbox, serve --sandbox and simulate do not overlap, whatever the number of connectors up to 100', () => {
    const sandbox = { from: SANDBOX_PORT, to: SANDBOX_PORT + SIMULATORS.length - 1 };
    const service = { from: SERVICE_SANDBOX_PORT, to: SERVICE_SANDBOX_PORT + SIMULATORS.length - 1 };
    expect(sandbox.to).toBeLessThan(service.from);
    // simulate sits below both ranges, which grow upward with every connector added.
    expect(SIMULATE_PORT).toBeLessThan(sandbox.from);
    expect(SANDBOX_PORT + 100).toBeLessThanOrEqual(SERVICE_SANDBOX_PORT);
  });

  it('listens on basePort + registry index', async () => {
    const basePort = await freePortBlock(SIMULATORS.length);
    const sandbox = await startSandbox({ basePort, host: '127.0.0.1' });
    try {
      const i = SIMULATORS.findIndex((s) => s.type === 'granola');
      expect(sandbox.connectors.granola?.base_url).toBe(`http://127.0.0.1:${basePort + i}`);
    } finally {
      await sandbox.close();
    }
  });

  it('closes what it started and frees the ports', async () => {
    const sandbox = await startSandbox();
    const url = sandbox.connectors.granola?.base_url as string;
    await sandbox.close();
    await expect(fetch(`${url}/v1/notes`)).rejects.toThrow();
  });
});

describe('startSandbox with a state file', () => {
  it('keeps OAuth tokens the simulators issued across a restart, and records where it listens', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'sb-sandbox-state-'));
    const stateFile = join(dir, 'sandbox-test.json');
    const me = (c: SandboxConnector, token: string): Promise<Response> =>
      fetch(`${c.base_url}/me`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    try {
      const first = await startSandbox({ stateFile, kind: 'service' });
      let issued: string;
      try {
        // A token issued through the simulated OAuth flow (what a connector of variant B stores).
        issued = `oauth-issued-${String(process.pid)}`;
        (first.simulators['intercom']?.['tokens'] as Set<string>).add(issued);
        expect((await me(first.connectors['intercom'] as SandboxConnector, issued)).status).toBe(200);
        const state = JSON.parse(readFileSync(stateFile, 'utf8')) as {
          kind: string;
          pid: number;
          tokens: Record<string, string[]>;
          connectors: Record<string, unknown>;
        };
        expect(state).toMatchObject({ kind: 'service', pid: process.pid, tokens: { intercom: [issued] } });
        expect(Object.keys(state.connectors).sort()).toEqual(Object.keys(first.connectors).sort());
      } finally {
        await first.close();
      }
      // Closed: the state says so (no command takes a stopped sandbox for a running one), tokens kept.
      expect(JSON.parse(readFileSync(stateFile, 'utf8'))).toMatchObject({ pid: 0, tokens: { intercom: [issued] } });
      // A fresh simulator would refuse the token; the restarted sandbox accepts it.
      const fresh = await startSandbox();
      const second = await startSandbox({ stateFile, kind: 'service' });
      try {
        expect((await me(fresh.connectors['intercom'] as SandboxConnector, issued)).status).toBe(401);
        expect((await me(second.connectors['intercom'] as SandboxConnector, issued)).status).toBe(200);
        expect(second.connectors['monday']?.credentials).toEqual(fresh.connectors['monday']?.credentials); // fixed sample credentials
      } finally {
        await Promise.all([fresh.close(), second.close()]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('simulators from vendor descriptions', () => {
  it("runs every connector folder with an OpenAPI or GraphQL description and a sidecar on the generic simulator of that format, with the sidecar's sample credentials", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-described-'));
    try {
      const write = (type: string, files: Record<string, string>): void => {
        mkdirSync(join(dir, type));
        for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, type, name), text);
      };
      const openapi = JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'Widgets', version: '1' },
        components: {
          securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
          schemas: { Widget: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } } },
        },
        security: [{ bearer: [] }],
        paths: {
          '/widgets': {
            get: {
              responses: {
                '200': { description: 'ok', content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Widget' } } } } },
              },
            },
          },
          '/widgets/{widget_id}': {
            get: {
              parameters: [{ name: 'widget_id', in: 'path', required: true, schema: { type: 'string' } }],
              responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } } } } },
            },
          },
        },
      });
      const manifest = 'type: widgets\nvendor_description: { path: openapi.json, format: openapi }\n';
      write('widgets', {
        'connector.yaml': manifest,
        'openapi.json': openapi,
        'simulator.yaml': 'auth: { tokens: [tok_1] }\nsandbox: { credentials: { api_token: tok_1 } }\n',
      });
      write('no-sidecar', { 'connector.yaml': manifest.replace('widgets', 'no-sidecar'), 'openapi.json': openapi });
      write('gadgets', {
        'connector.yaml': 'type: gadgets\nvendor_description: { path: s.graphql, format: graphql }\n',
        's.graphql': 'type Query { gadgets: [Gadget!]! } type Gadget { id: ID! name: String! }',
        'simulator.yaml': 'auth: { tokens: [gql_1] }\nrecords: 3\nsandbox: { credentials: { api_key: gql_1 } }\n',
      });
      write('graphql-no-sidecar', {
        'connector.yaml': 'type: graphql-no-sidecar\nvendor_description: { path: s.graphql, format: graphql }\n',
        's.graphql': 'type Query { a: Int }',
      });
      write('coded', { 'connector.yaml': manifest.replace('widgets', 'coded'), 'openapi.json': openapi, 'simulator.yaml': '{}' });

      const entries = describedSimulators(dir, new Set(['coded']));
      expect(entries.map((e) => e.type)).toEqual(['gadgets', 'widgets']);
      const gadgets = entries[0] as (typeof entries)[number];
      const gsim = (await gadgets.start({ port: 0 })) as NonNullable<Awaited<ReturnType<typeof gadgets.start>>>;
      try {
        expect(gadgets.credentials(gsim)).toEqual({ api_key: 'gql_1' });
        const ask = (token: string): Promise<Response> =>
          fetch(`${gsim.url}/graphql`, {
            method: 'POST',
            headers: { authorization: token, 'content-type': 'application/json' },
            body: JSON.stringify({ query: '{ gadgets { id name } }' }),
          });
        const ok = await ask('gql_1');
        expect(ok.status).toBe(200);
        expect(((await ok.json()) as { data: { gadgets: unknown[] } }).data.gadgets).toHaveLength(3);
        const refused = await ask('other');
        expect(refused.status).toBe(401);
        await refused.arrayBuffer();
      } finally {
        await gsim.close();
      }
      const entry = entries[1] as (typeof entries)[number];
      const sim = (await entry.start({ port: 0 })) as NonNullable<Awaited<ReturnType<typeof entry.start>>>;
      try {
        const credentials = entry.credentials(sim);
        expect(credentials).toEqual({ api_token: 'tok_1' });
        const ok = await fetch(`${sim.url}/widgets`, { headers: { authorization: 'Bearer tok_1' } });
        expect(ok.status).toBe(200);
        expect(Array.isArray(await ok.json())).toBe(true);
        const refused = await fetch(`${sim.url}/widgets`, { headers: { authorization: 'Bearer other' } });
        expect(refused.status).toBe(401);
        await refused.arrayBuffer();
      } finally {
        await sim.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
