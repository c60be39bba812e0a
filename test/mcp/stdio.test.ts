/**
 * `switchboard mcp --connectors <file>` over stdio, driven by the official MCP SDK client,
 * against the three simulators: tools and their schemas, describe, execute on each connector
 * type (per-action tools too), validation errors, the output budget, read-only mode, search's
 * hosted-only answer, a missing environment variable, and no credential in any output or log.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';
import { runSwitchboard, SWITCHBOARD_BIN } from '../helpers/process.ts';
import { callTool, structured } from './helpers.ts';

const INTERCOM_TOKEN = 'sk_mcp_test_intercom_token_7f3a';

let granola: GranolaSimulator;
let intercom: IntercomSimulator;
let monday: MondaySimulator;
let dir: string;
let file: string;
let env: Record<string, string>;
/** Every tool result's text and structured content, for the secrets check. */
const outputs: string[] = [];

interface Session {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
}

async function startSession(extraArgs: string[] = []): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SWITCHBOARD_BIN, 'mcp', '--connectors', file, ...extraArgs],
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

const call = (s: Session, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> => callTool(s.client, outputs, name, args);

let main: Session;
let limited: Session;

beforeAll(async () => {
  [granola, intercom, monday] = await Promise.all([
    startGranolaSimulator({ size: 60, rateLimit: false }),
    startIntercomSimulator({ size: 40, rateLimit: false, accessToken: INTERCOM_TOKEN }),
    startMondaySimulator({ size: 30 }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'switchboard-mcp-'));
  file = join(dir, 'connectors.yaml');
  writeFileSync(
    file,
    [
      'connectors:',
      '  - id: granola',
      '    type: granola',
      "    description: Our team's meeting notes",
      `    base_url: ${granola.url}`,
      '    credentials:',
      '      api_key: ${GRANOLA_API_KEY}',
      '  - id: support',
      '    type: intercom',
      `    base_url: ${intercom.url}`,
      '    credentials:',
      '      access_token: ${INTERCOM_TOKEN}',
      '  - id: work',
      '    type: monday',
      `    base_url: ${monday.url}`,
      '    credentials:',
      '      api_key: ${MONDAY_API_KEY}',
      '',
    ].join('\n'),
  );
  env = { GRANOLA_API_KEY: granola.apiKey, INTERCOM_TOKEN, MONDAY_API_KEY: monday.apiKey };
  [main, limited] = await Promise.all([startSession(), startSession(['--read-only', '--max-output-bytes', '3000'])]);
});

afterAll(async () => {
  await Promise.all([main?.close(), limited?.close()]);
  await Promise.all([granola?.close(), intercom?.close(), monday?.close()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('switchboard mcp (stdio)', () => {
  it('lists the four tools and one per action, create and update marked not read-only, with the generated params schemas', async () => {
    const { tools } = await main.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of ['list_connectors', 'describe', 'execute', 'search']) expect(byName.has(n), n).toBe(true);
    expect(byName.get('execute')?.description).toContain("granola: Granola (Our team's meeting notes) — Meeting notes");
    expect(byName.get('list_connectors')?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('execute')?.annotations?.readOnlyHint).toBe(false);
    const create = byName.get('work_items_create');
    expect(create?.annotations?.readOnlyHint).toBe(false);
    expect(byName.get('support_contacts_update')?.annotations?.readOnlyHint).toBe(false);
    expect(byName.get('granola_notes_list')?.annotations?.readOnlyHint).toBe(true);
    const generated = JSON.parse(readFileSync(new URL('../../generated/monday/schemas/items.create.params.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    const { $comment: _c, ...schema } = generated;
    expect(create?.inputSchema).toEqual(schema);
    expect(create?.description).toContain('Create an item on a board');
  });

  it('list_connectors gives ids, types, titles and entity/action names', async () => {
    const r = await call(main, 'list_connectors');
    expect(r.isError).toBeFalsy();
    const data = structured(r).data as { id: string; type: string; title: string; entities: { name: string; actions: string[] }[] }[];
    expect(data.map((d) => [d.id, d.type, d.title])).toEqual([
      ['granola', 'granola', 'Granola'],
      ['support', 'intercom', 'Intercom'],
      ['work', 'monday', 'monday.com'],
    ]);
    expect(data[1]?.entities.find((e) => e.name === 'contacts')?.actions).toEqual(['list', 'get', 'create', 'update', 'search']);
  });

  it('describe gives Intercom contacts: params schemas, record schema, search fields with operators', async () => {
    const r = await call(main, 'describe', { connector: 'support', entity: 'contacts' });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const { entity } = structured(r);
    expect(entity.name).toBe('contacts');
    const list = entity.actions.find((a: { name: string }) => a.name === 'list');
    const generated = JSON.parse(readFileSync(new URL('../../generated/intercom/schemas/contacts.list.params.json', import.meta.url), 'utf8')) as {
      properties: unknown;
    };
    expect(list.params_schema.properties).toEqual(generated.properties);
    expect(list.read_only).toBe(true);
    expect(entity.actions.find((a: { name: string }) => a.name === 'create').read_only).toBe(false);
    expect(entity.record_schema.properties.email).toBeDefined();
    const email = entity.search_fields.find((f: { name: string }) => f.name === 'email');
    expect(email).toMatchObject({ type: 'string' });
    expect(email.operators).toContain('like');
  });

  it("describe of a whole connector gives every action's params schema and the search field types, small enough for a context", async () => {
    for (const id of ['granola', 'support', 'work']) {
      const r = await call(main, 'describe', { connector: id });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      expect(Buffer.byteLength(JSON.stringify(structured(r)))).toBeLessThan(20_000);
    }
    const r = await call(main, 'describe', { connector: 'work' });
    const items = structured(r).entities.find((e: { name: string }) => e.name === 'items');
    expect(items.record_schema).toBeUndefined();
    expect(items.actions.find((a: { name: string }) => a.name === 'create').params_schema.required).toEqual(['board_id', 'item_name']);
    expect(typeof items.search_fields.name).toBe('string');
    const unknown = await call(main, 'describe', { connector: 'work', entity: 'nope' });
    expect(structured(unknown).error).toMatchObject({ code: 'unknown_entity', errors: [{ path: '/entity' }] });
  });

  it('execute lists Granola notes, lists Intercom contacts with fields, and creates a Monday item', async () => {
    const notes = await call(main, 'execute', { connector: 'granola', entity: 'notes', action: 'list', params: { page_size: 5 } });
    expect(notes.isError, JSON.stringify(notes.content)).toBeFalsy();
    expect(structured(notes).data).toHaveLength(5);
    expect(structured(notes).truncated).toBeUndefined();
    expect((notes.content[0] as { text: string }).text).toContain('granola notes list: 5 records');

    const contacts = await call(main, 'execute', {
      connector: 'support',
      entity: 'contacts',
      action: 'list',
      params: { per_page: 3 },
      fields: ['id', 'email'],
    });
    expect(contacts.isError, JSON.stringify(contacts.content)).toBeFalsy();
    const rows = structured(contacts).data as Record<string, unknown>[];
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(['email', 'id']);

    const boards = await call(main, 'execute', { connector: 'work', entity: 'boards', action: 'list', fields: ['id', 'name'] });
    const boardId = (structured(boards).data as { id: string }[])[0]!.id;
    const created = await call(main, 'work_items_create', { board_id: boardId, item_name: 'Written by an agent' });
    expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
    expect(structured(created).data).toMatchObject({ name: 'Written by an agent' });
    const id = (structured(created).data as { id: string }).id;
    const fetched = await call(main, 'execute', { connector: 'work', entity: 'items', action: 'get', params: { id }, fields: ['id', 'name'] });
    expect(fetched.isError, JSON.stringify(fetched.content)).toBeFalsy();
    expect(structured(fetched).data).toEqual({ id, name: 'Written by an agent' });
  });

  it('a per-action tool runs its action (Granola note get)', async () => {
    const id = granola.ids()[0]!;
    const r = await call(main, 'granola_notes_get', { note_id: id });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    expect(structured(r).data.id).toBe(id);
  });

  it('invalid params are a tool error with our code and the failing param paths', async () => {
    const r = await call(main, 'execute', { connector: 'granola', entity: 'notes', action: 'get', params: { include: 'everything' } });
    expect(r.isError).toBe(true);
    expect(structured(r).error.code).toBe('invalid_params');
    expect(
      structured(r)
        .error.errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['/params/include', '/params/note_id']);
    expect((r.content[0] as { text: string }).text).toMatch(/^invalid_params: /);

    const args = await call(main, 'execute', { connector: 'granola', entity: 'notes', action: 'delete' });
    expect(args.isError).toBe(true);
    expect(structured(args).error).toMatchObject({
      code: 'invalid_params',
      errors: [{ path: '/action', message: 'must be one of: list, get, create, update, search, context_store_search' }],
    });

    const unknown = await call(main, 'execute', { connector: 'nope', entity: 'notes', action: 'list' });
    expect(structured(unknown).error.code).toBe('connector_not_found');
  });

  it('a request with invalid params answers -32602 Invalid params naming the path, not -32603 with a validation dump', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ method: 'tools/call', params: { arguments: {} } }, '/params/name'],
      [{ method: 'tools/call', params: { name: 5 } }, '/params/name'],
      [{ method: 'tools/call', params: { name: 'execute', arguments: 'x' } }, '/params/arguments'],
      [{ method: 'tools/list', params: { cursor: 5 } }, '/params/cursor'],
      [{ method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } }, '/params/name'],
    ];
    for (const [request, path] of cases) {
      const e = await main.client.request(request as never, CallToolResultSchema).then(
        () => undefined,
        (err: unknown) => err as { code: number; message: string; data?: { errors: { path: string }[] } },
      );
      expect([request, e?.code]).toEqual([request, -32602]);
      expect(e?.message).not.toContain('"code"');
      expect(e?.data?.errors.map((x) => x.path)).toContain(path);
    }
    // The session still serves.
    expect((await call(main, 'list_connectors')).isError).toBeFalsy();
  });

  it('search answers search_hosted_only locally', async () => {
    const r = await call(main, 'search', { connector: 'support', entity: 'contacts', query: {} });
    expect(r.isError).toBe(true);
    expect(structured(r).error.code).toBe('search_hosted_only');
    expect(structured(r).error.message).toContain('hosted mode only');
  });

  it('a list larger than the budget comes back cut at a record boundary, with a notice', async () => {
    const r = await call(limited, 'execute', { connector: 'granola', entity: 'notes', action: 'list', params: { page_size: 30 } });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const value = structured(r);
    expect(Buffer.byteLength(JSON.stringify(value))).toBeLessThanOrEqual(3000);
    expect(value.data.length).toBeGreaterThan(0);
    expect(value.truncated).toMatchObject({ budget_bytes: 3000, records_returned: value.data.length, records_omitted: 30 - value.data.length });
    expect(value.truncated.next).toContain('params.page_size');
    expect(value.truncated.next).toContain('params.cursor');
    // The records kept are whole: the first ones of the page, unchanged.
    const full = await call(main, 'execute', { connector: 'granola', entity: 'notes', action: 'list', params: { page_size: 30 } });
    expect(value.data).toEqual(structured(full).data.slice(0, value.data.length));
    expect(Buffer.byteLength(JSON.stringify(structured(full)))).toBeLessThanOrEqual(20_000);
    expect((r.content[0] as { text: string }).text).toContain('left out');
  });

  it('read-only mode exposes list, get and search only and refuses create with a tool error', async () => {
    const { tools } = await limited.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('granola_notes_list');
    expect(names.filter((n) => /_(create|update)$/.test(n))).toEqual([]);
    expect(tools.find((t) => t.name === 'execute')?.annotations?.readOnlyHint).toBe(true);
    const before = monday.requests.length;
    const refused = await call(limited, 'execute', { connector: 'work', entity: 'items', action: 'create', params: { board_id: '1', item_name: 'x' } });
    expect(refused.isError).toBe(true);
    expect(structured(refused).error).toMatchObject({ code: 'read_only', details: { action: 'create' } });
    expect(monday.requests.length).toBe(before);
    const described = await call(limited, 'describe', { connector: 'support', entity: 'contacts' });
    expect(structured(described).entity.actions.map((a: { name: string }) => a.name)).toEqual(['list', 'get', 'search']);
    const listed = await call(limited, 'execute', { connector: 'support', entity: 'contacts', action: 'list', params: { per_page: 2 }, fields: ['id'] });
    expect(listed.isError).toBeFalsy();
  });

  it('a missing environment variable stops the server at start, naming the connector and the variable', async () => {
    const r = await runSwitchboard(['mcp', '--connectors', file], { GRANOLA_API_KEY: granola.apiKey, INTERCOM_TOKEN, MONDAY_API_KEY: '' });
    expect(r.code).toBe(1);
    const err = JSON.parse(r.stderr).error as { code: string; message: string };
    expect(err.code).toBe('invalid_connectors_file');
    expect(err.message).toContain('MONDAY_API_KEY (connector work)');
  });

  it('no credential appears in any tool output or log line', () => {
    expect(outputs.length).toBeGreaterThan(10);
    const text = outputs.join('\n') + main.stderr() + limited.stderr();
    expect(main.stderr()).toContain('mcp tool call');
    for (const secret of [granola.apiKey, INTERCOM_TOKEN, monday.apiKey]) expect(text).not.toContain(secret);
  });
});
