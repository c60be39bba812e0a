/**
 * `switchboard init --from-graphql`: entities from root fields returning lists or Relay
 * connections, get from a getter by id (or the list by ids), create/update from mutations with
 * input objects spread into params; every query the manifest can send validates against the
 * schema, and the scaffold runs unedited through `switchboard exec` against a graphql-js server
 * of the same schema.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSchema, graphql, parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ConnectorRuntime } from '../../src/index.ts';
import { loadManifestFile } from '../../src/manifest/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

const TRACKER = 'test/fixtures/graphql/tracker.graphql';
const MONDAY = 'connectors/monday/schema-2026-10.graphql';
type Rec = Record<string, any>;

/** Every GraphQL document of a manifest's actions, with where it is. */
function documents(m: Rec): [string, string][] {
  const out: [string, string][] = [];
  for (const [e, ent] of Object.entries(m['entities'] as Rec))
    for (const [a, act] of Object.entries(ent.actions as Rec)) out.push([`${e}.${a}`, act.request.graphql.query]);
  return out;
}

/** A graphql-js server of the tracker schema with projects in memory; refuses a request without a bearer token. */
function trackerServer(): Promise<{ url: string; server: Server }> {
  const schema = buildSchema(readFileSync(TRACKER, 'utf8'));
  const projects: Rec[] = [];
  const byId = (id: string): Rec | undefined => projects.find((p) => p.id === id);
  const root = {
    projects: ({ first, after }: { first?: number; after?: string }) => {
      const start = after ? Number(after) : 0;
      const n = first ?? 50;
      const slice = projects.slice(start, start + n);
      return {
        edges: slice.map((node, i) => ({ node, cursor: String(start + i + 1) })),
        pageInfo: { hasNextPage: start + n < projects.length, endCursor: slice.length ? String(start + slice.length) : null },
      };
    },
    project: ({ id }: { id: string }) => byId(id) ?? null,
    labels: () => [{ id: 'l1', name: 'bug', color: 'red' }],
    viewer: () => ({ id: 'u1', name: 'Ada' }),
    createProject: ({ input }: { input: Rec }) => {
      const p = { id: `p${projects.length + 1}`, state: 'ACTIVE', owner: { id: 'u1', name: 'Ada' }, issues: [], ...input };
      projects.push(p);
      return { project: p };
    },
    updateProject: ({ id, input }: { id: string; input: Rec }) => {
      const p = byId(id);
      if (p) Object.assign(p, input);
      return { project: p ?? null };
    },
  };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      void (async () => {
        res.setHeader('content-type', 'application/json');
        if (!/^Bearer \S+/.test(req.headers.authorization ?? '')) {
          res.statusCode = 401;
          res.end(JSON.stringify({ errors: [{ message: 'unauthenticated' }] }));
          return;
        }
        const { query, variables } = JSON.parse(text) as { query: string; variables?: Rec };
        res.end(JSON.stringify(await graphql({ schema, source: query, rootValue: root, variableValues: variables ?? {} })));
      })();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server })),
  );
}

describe('init --from-graphql', () => {
  let root: string;
  let up: { url: string; server: Server };
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'sb-init-gql-'));
    up = await trackerServer();
  });
  afterAll(() => new Promise<void>((r) => up.server.close(() => r())));

  it('scaffolds entities, getters, mutations and Relay pagination; every query validates against the schema', async () => {
    const out = join(root, 'a');
    const r = await runSwitchboard(['init', 'tracker', '--from-graphql', TRACKER, '--endpoint', 'https://api.tracker.test/graphql', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/2 entities: projects \[list, get, create, update\]; labels \[list\]/);
    expect(r.stdout).toMatch(/labels\.get: no root field returns one Label by id/);
    const m = parseYaml(readFileSync(join(out, 'tracker', 'connector.yaml'), 'utf8')) as Rec;
    expect(m['base_url']).toEqual({ default: 'https://api.tracker.test' });
    const p = m['entities'].projects;
    expect(p.actions.list.request).toMatchObject({ method: 'POST', path: '/graphql' });
    expect(p.actions.list.pagination).toEqual({
      type: 'graphql_cursor',
      param: 'after',
      next: '{{body.data.projects.pageInfo.endCursor}}',
      has_more: '{{body.data.projects.pageInfo.hasNextPage}}',
    });
    expect(p.actions.list.response.records).toBe("{{pluck body.data.projects.edges 'node'}}");
    expect(p.actions.create.params.name).toEqual({ type: 'string', required: true });
    expect(p.actions.create.request.graphql.variables).toEqual({
      input: { name: '{{params.name}}', description: '{{params.description}}', priority: '{{params.priority}}', state: '{{params.state}}' },
    });
    expect(p.actions.create.response.record).toBe('{{body.data.createProject.project}}');
    expect(p.record.properties.state).toEqual({ type: 'string', enum: ['ACTIVE', 'ARCHIVED'] });
    expect(p.record.properties.issues).toBeUndefined(); // a field with a required argument is not selected
    const schema = buildSchema(readFileSync(TRACKER, 'utf8'));
    for (const [where, q] of documents(m))
      expect(
        validate(schema, parse(q)).map((e) => e.message),
        where,
      ).toEqual([]);
    expect((await runSwitchboard(['validate', '--connectors', out])).code).toBe(0);
  });

  it('a filter comparing updatedAt gives updated_since and an incremental sync; includeArchived with archivedAt, removals; deprecated fields are left out', async () => {
    const TICKETS = 'test/fixtures/factory/tickets.graphql';
    const out = join(root, 'tickets');
    const r = await runSwitchboard([
      'init',
      'tickets',
      '--from-graphql',
      TICKETS,
      '--endpoint',
      'https://api.tickets.test/graphql',
      '--entities',
      'tickets,members',
      '--out',
      out,
    ]);
    expect(r.stderr).toBe('');
    const m = loadManifestFile(join(out, 'tickets', 'connector.yaml'));
    const tickets = m.entities.get('tickets')!;
    expect(tickets.def.sync).toEqual({
      incremental: { param: 'updated_since', cursor_field: 'updatedAt' },
      removals: { entity: 'tickets', since_param: 'updated_since', params: { include_archived: true }, when: '{{record.archivedAt}}', id: '{{record.id}}' },
    });
    // members takes no filter: no sync is guessed.
    expect(m.entities.get('members')!.def.sync).toBeUndefined();
    expect(Object.keys(tickets.def.record.properties as Rec)).not.toContain('legacyRank');
    const schema = buildSchema(readFileSync(TICKETS, 'utf8'));
    const rt = new ConnectorRuntime(m, { token: 't' } as never, { limiter: null });
    const variables = (params: Rec): Rec => {
      const body = JSON.parse(rt.render(tickets.actions.get('list')!, params).init.body as string) as { query: string; variables: Rec };
      expect(validate(schema, parse(body.query))).toEqual([]);
      return body.variables;
    };
    expect(variables({ updated_since: '2026-01-31T12:00:00.000Z' })['filter']).toEqual({ updatedAt: { gt: '2026-01-31T12:00:00.000Z' } });
    expect(variables({ filter: { id: { eq: 'a' } } })['filter']).toEqual({ id: { eq: 'a' } });
    expect(variables({ updated_since: '2026-01-31T12:00:00.000Z', filter: { id: { eq: 'a' } } })['filter']).toEqual({
      and: [{ updatedAt: { gt: '2026-01-31T12:00:00.000Z' } }, { id: { eq: 'a' } }],
    });
    expect(variables({})['filter']).toBeUndefined();
  });

  it('runs unedited through exec against a server of the same schema', async () => {
    const out = join(root, 'b');
    expect((await runSwitchboard(['init', 'tracker', '--from-graphql', TRACKER, '--endpoint', `${up.url}/graphql`, '--out', out])).code).toBe(0);
    const exec = async (entity: string, action: string, params: Rec, extra: string[] = []): Promise<Rec> => {
      const r = await runSwitchboard(['exec', 'tracker', entity, action, '--params', JSON.stringify(params), '--connectors', out, ...extra], {
        SWITCHBOARD_CREDENTIALS: '{"token":"t0k"}',
      });
      expect(r.stderr, `${entity}.${action}`).toBe('');
      return JSON.parse(r.stdout) as Rec;
    };
    const created = (await exec('projects', 'create', { name: 'Apollo', priority: 2 })).data;
    expect(created).toMatchObject({ name: 'Apollo', priority: 2, state: 'ACTIVE', owner: { id: 'u1' } });
    expect((await exec('projects', 'get', { id: created.id })).data).toMatchObject({ id: created.id, name: 'Apollo' });
    expect((await exec('projects', 'update', { id: created.id, name: 'Apollo 11' })).data).toMatchObject({ name: 'Apollo 11' });
    await exec('projects', 'create', { name: 'Gemini' });
    await exec('projects', 'create', { name: 'Mercury' });
    const all = await exec('projects', 'list', { first: 2 }, ['--all-pages']);
    expect(all.data.map((x: Rec) => x.name)).toEqual(['Apollo 11', 'Gemini', 'Mercury']);
    expect(all.meta.pages).toBe(2);
    const missing = await runSwitchboard(['exec', 'tracker', 'projects', 'get', '--params', '{"id":"nope"}', '--connectors', out], {
      SWITCHBOARD_CREDENTIALS: '{"token":"t0k"}',
    });
    expect(JSON.parse(missing.stderr).error.code).toBe('upstream_not_found');
  }, 120_000);

  it("on monday's schema: list fields with ids make get, page/limit args make page pagination", async () => {
    const out = join(root, 'c');
    const r = await runSwitchboard([
      'init',
      'mon',
      '--from-graphql',
      MONDAY,
      '--endpoint',
      'https://api.monday.com/v2',
      '--entities',
      'boards,items',
      '--out',
      out,
    ]);
    expect(r.stderr).toBe('');
    const m = parseYaml(readFileSync(join(out, 'mon', 'connector.yaml'), 'utf8')) as Rec;
    expect(m['entities'].boards.actions.list.pagination).toMatchObject({ type: 'page', param: 'page', limit_param: 'limit' });
    expect(m['entities'].boards.actions.get.response.record).toBe('{{first body.data.boards}}');
    expect(Object.keys(m['entities'].items.actions)).toContain('create');
    const schema = buildSchema(readFileSync(MONDAY, 'utf8'));
    for (const [where, q] of documents(m))
      expect(
        validate(schema, parse(q)).map((e) => e.message),
        where,
      ).toEqual([]);
  });

  it('refuses a missing --endpoint and an unknown entity, saying what exists', async () => {
    const none = await runSwitchboard(['init', 'x', '--from-graphql', TRACKER, '--out', join(root, 'd')]);
    expect(JSON.parse(none.stderr).error.message).toMatch(/--from-graphql needs --endpoint/);
    const bad = await runSwitchboard([
      'init',
      'x',
      '--from-graphql',
      TRACKER,
      '--endpoint',
      'https://x.test/graphql',
      '--entities',
      'tickets',
      '--out',
      join(root, 'd'),
    ]);
    expect(JSON.parse(bad.stderr).error.message).toMatch(/tickets not found in the schema; entities .*projects, labels/);
  });
});
