/**
 * The Monday simulator's in-memory account: users, teams, workspaces, tags and boards (the
 * sidecar's records), items with column values and updates (seeded here deterministically from a
 * seed), so every run (tests, `switchboard sandbox`, benchmarks) sees the same data.
 *
 * Shapes follow the public GraphQL schema (mondaycom/monday-graphql-api, schema.graphql): IDs
 * are numeric strings, dates are ISO 8601 without milliseconds, and a column value keeps its raw
 * `value` as a JSON *string* plus a display `text`, as the API returns them.
 */
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../../src/manifest/connectors-dir.ts';
import { loadSidecar } from '../../../src/simulator/sidecar.ts';
import { seededRandom, pick } from '../../../src/simulator/sim-server.ts';

/** An application-level error of a field: one entry of `errors` with monday's code, status_code and error_data. */
export class MondayApiError extends Error {
  readonly extensions: Record<string, unknown>;
  constructor(code: string, message: string, statusCode = 200, errorData: Record<string, unknown> = {}) {
    super(message);
    this.extensions = { code, status_code: statusCode, error_data: errorData };
  }
}

export type ColumnType =
  'name' | 'people' | 'status' | 'date' | 'numbers' | 'text' | 'long_text' | 'checkbox' | 'board_relation' | 'mirror' | 'dependency' | 'formula';

export interface ColumnDef {
  id: string;
  title: string;
  type: ColumnType;
  description: string | null;
  width: number | null;
  archived: boolean;
  /** Parsed settings; `settings_str` is its JSON. For status: { labels: {index: label}, labels_colors, done_colors }. */
  settings: Record<string, unknown>;
}

export interface GroupDef {
  id: string;
  board_id: string;
  title: string;
  color: string;
  position: string;
  archived: boolean;
  deleted: boolean;
}

/** One column value as stored: the raw JSON string (null when empty) and its display text. */
export interface Cell {
  value: string | null;
  text: string;
  updated_at: string | null;
}

export type State = 'active' | 'archived' | 'deleted';

// The records the sidecar seeds (resources.<Type> in connectors/monday/simulator.yaml) are typed
// by the fields the code and the tests read; the rest are the sidecar's, in the SDL's shape.

/** A user, in the 2026-10 shape. */
export interface UserRec {
  [field: string]: unknown;
  id: string;
  name: string;
  email: string;
  status: 'ACTIVE' | 'PENDING' | 'INACTIVE';
  kind: 'admin' | 'member' | 'guest' | 'view_only';
  is_email_confirmed: boolean;
  created_at: string;
  time_zone_identifier: string;
  utc_hours_diff: number;
}

export interface TeamRec {
  [field: string]: unknown;
  id: string;
  name: string;
  user_ids: string[];
  owner_ids: string[];
}

export interface WorkspaceRec {
  [field: string]: unknown;
  id: string;
  name: string;
  kind: 'open' | 'closed';
  description: string | null;
  created_at: string;
}

export interface TagRec {
  id: string;
  name: string;
  color: string;
}

export interface BoardRec {
  [field: string]: unknown;
  id: string;
  name: string;
  description: string | null;
  state: State;
  workspace_id: string | null;
  columns: ColumnDef[];
  groups: GroupDef[];
  created_at: string;
  updated_at: string;
  /** Item ids in board order (group order, then position); rebuilt lazily after writes. */
  orderCache?: string[] | null;
  /** board, or sub_items_board for the board holding another board's subitems. */
  type: 'board' | 'sub_items_board';
  /** The board holding this board's subitems, created with the first subitem. */
  subitems_board_id?: string;
}

export interface ItemRec {
  id: string;
  name: string;
  board_id: string;
  group_id: string;
  state: State;
  creator_id: string;
  created_at: string;
  updated_at: string;
  /** Smaller is higher in its group; items created through the API go to the top. */
  position: number;
  subscriber_ids: string[];
  cells: Record<string, Cell>;
  /** For a subitem: its parent item. */
  parent_id?: string;
}

/** One activity-log entry of a board, as logged (Board.activity_logs). */
export interface ActivityEntry {
  board_id: string;
  item_id: string | null;
  /** create_pulse, update_column_value, update_name, archive_pulse, delete_pulse, create_group, create_column, ... */
  event: string;
  user_id: string;
  /** Epoch milliseconds. */
  at: number;
  data: Record<string, unknown>;
}

/** An ActivityLogType record as stored: data as the JSON text monday answers, its column and group beside it for the filters. */
export type ActivityRec = Omit<ActivityEntry, 'data'> & { id: string; entity: 'board' | 'pulse'; data: string; column_id?: unknown; group_id?: unknown };

export interface UpdateRec {
  id: string;
  item_id: string;
  creator_id: string;
  body: string;
  text_body: string;
  created_at: string;
  updated_at: string;
  edited_at: string;
}

/** A board's webhook subscription (create_webhook), with the URL it posts to. */
export interface WebhookRec {
  id: string;
  board_id: string;
  event: string;
  config: string | null;
  url: string;
}

export interface AccountRec {
  id: string;
  name: string;
  slug: string;
  country_code: string;
  tier: string;
}

/**
 * The whole simulated account. Its records are the GraphQL simulator's store (`tables`, by type
 * name: the sidecar's graphql.fields and graphql.lists resolve relations over it); the arrays are
 * views of it in stored order. Tests may read (and, deliberately, mutate) it.
 */
export interface MondayState {
  account: AccountRec;
  tables: {
    User: Map<string, UserRec>;
    Team: Map<string, TeamRec>;
    Workspace: Map<string, WorkspaceRec>;
    Tag: Map<string, TagRec>;
    Board: Map<string, BoardRec>;
    Item: Map<string, ItemRec>;
    Update: Map<string, UpdateRec>;
    ActivityLogType: Map<string, ActivityRec>;
    Webhook: Map<string, WebhookRec>;
  };
  readonly users: UserRec[];
  readonly teams: TeamRec[];
  readonly workspaces: WorkspaceRec[];
  readonly tags: TagRec[];
  readonly boards: BoardRec[];
  items: Map<string, ItemRec>;
  /** Updates, oldest first (queries return newest first, as Monday does). */
  readonly updates: UpdateRec[];
  /** Next numeric ids for records created through the API. */
  nextItemId: number;
  nextUpdateId: number;
}

/** The account's vocabularies and layout: the sidecar's `pools` (connectors/monday/simulator.yaml). */
const POOLS = loadSidecar(join(CONNECTORS_DIR, 'monday', 'simulator.yaml')).pools ?? {};
function pool<T>(name: string): T[] {
  const values = POOLS[name];
  if (values === undefined) throw new Error(`connectors/monday/simulator.yaml declares no pools.${name}`);
  return values as T[];
}

/** Seed epoch: data is spread over the year before this instant. */
const EPOCH = Date.UTC(2024, 11, 31, 12, 0, 0);

/** ISO 8601 without milliseconds, the way Monday formats Date values. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The seeded boards' columns (a fresh copy per board: settings change through the API). */
function boardColumns(): ColumnDef[] {
  return pool<Pick<ColumnDef, 'id' | 'title' | 'type' | 'settings'>>('columns').map((c) => ({
    id: c.id,
    title: c.title,
    type: c.type,
    description: null,
    width: null,
    archived: false,
    settings: structuredClone(c.settings ?? {}),
  }));
}

/** The labels of the seeded status column, the defaults of a status column created through the API. */
export const statusLabels = (): Record<string, string> => (boardColumns().find((c) => c.id === 'status')?.settings['labels'] ?? {}) as Record<string, string>;

const column = (board: BoardRec, id: string): ColumnDef => board.columns.find((c) => c.id === id) as ColumnDef;

/** Display text of a status index on a column. */
export function statusLabel(col: ColumnDef, index: number): string | undefined {
  const labels = col.settings['labels'] as Record<string, string>;
  return labels[String(index)];
}

/** Rebuild (or return) a board's item order (deleted items left out): group order, then position, then id. */
export function boardOrder(state: MondayState, board: BoardRec): string[] {
  if (board.orderCache) return board.orderCache;
  const groupIndex = new Map(board.groups.map((g, i) => [g.id, i]));
  const ids: ItemRec[] = [];
  for (const item of state.items.values()) if (item.board_id === board.id && item.state !== 'deleted') ids.push(item);
  ids.sort((a, b) => (groupIndex.get(a.group_id) ?? 99) - (groupIndex.get(b.group_id) ?? 99) || a.position - b.position || Number(a.id) - Number(b.id));
  board.orderCache = ids.map((i) => i.id);
  return board.orderCache;
}

export interface SeedOptions {
  seed: number;
  /** Total items across all boards (clamped to 1..100000). */
  size: number;
}

/**
 * Build the account over the simulator's store: users, teams, workspaces, tags and boards are the
 * sidecar's records (already in `tables`); this seeds the items and their updates. Same options →
 * byte-identical state.
 */
export function seedState(opts: SeedOptions, tables: MondayState['tables']): MondayState {
  const rand = seededRandom(opts.seed);
  const size = Math.max(1, Math.min(100_000, Math.floor(opts.size)));
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
  const ago = (maxDays: number): number => EPOCH - Math.floor(rand() * maxDays * 86_400_000);
  const account: AccountRec = { id: String(9_300_000 + (opts.seed % 100_000)), name: 'Acme Robotics', slug: 'acme-robotics', country_code: 'US', tier: 'pro' };
  const users = [...tables.User.values()];
  const uid = (i: number): string => (users[i % users.length] as UserRec).id;
  const boards = [...tables.Board.values()];
  const firstBoardId = (boards[0] as BoardRec).id;
  // Every board gets its own copy of the column layout (settings change through the API); connect
  // boards link the first board, dependencies the board itself.
  for (const b of boards) {
    b.columns = boardColumns();
    for (const c of b.columns)
      if (c.type === 'board_relation' || c.type === 'dependency') c.settings = { boardIds: [Number(c.type === 'dependency' ? b.id : firstBoardId)] };
    for (const g of b.groups) g.board_id = b.id;
  }
  const state = { account, items: tables.Item, nextItemId: 0, nextUpdateId: 0 };
  const activity: ActivityEntry[] = [];

  // Items: split `size` across boards by their shares (every board gets at least one).
  let itemSeq = 0;
  const counts = boards.map((_, i) => Math.max(1, Math.floor(size * (pool<number>('item_shares')[i] ?? 0))));
  counts[0] = Math.max(1, (counts[0] as number) + size - counts.reduce((a, c) => a + c, 0));
  boards.forEach((board, bi) => {
    const n = counts[bi] as number;
    for (let k = 0; k < n; k++) {
      const id = String(1_900_000_000 + itemSeq * 7);
      itemSeq++;
      const created = ago(365);
      const updated = created + Math.floor(rand() * (EPOCH - created) * 0.5);
      const group = board.groups[k % board.groups.length] as GroupDef;
      const changed = isoSeconds(updated);
      const cells: Record<string, Cell> = {};
      const owner = users[int(0, users.length - 5)] as UserRec;
      cells['person'] =
        rand() < 0.85
          ? {
              value: JSON.stringify({ personsAndTeams: [{ id: Number(owner.id), kind: 'person' }], changed_at: changed }),
              text: owner.name,
              updated_at: changed,
            }
          : { value: null, text: '', updated_at: null };
      const statusIndex = group.id === 'topics' ? 5 : group.id === 'new_group' ? pick(rand, [0, 2]) : 1;
      cells['status'] = {
        value: JSON.stringify({ index: statusIndex, post_id: null, changed_at: changed }),
        text: statusLabel(column(board, 'status'), statusIndex) as string,
        updated_at: changed,
      };
      const due = isoSeconds(created + int(5, 90) * 86_400_000).slice(0, 10);
      cells['date4'] =
        rand() < 0.8
          ? { value: JSON.stringify({ date: due, changed_at: changed }), text: due, updated_at: changed }
          : { value: null, text: '', updated_at: null };
      const pr = int(0, 3);
      cells['priority'] = {
        value: JSON.stringify({ index: pr, post_id: null, changed_at: changed }),
        text: statusLabel(column(board, 'priority'), pr) as string,
        updated_at: changed,
      };
      const est = int(1, 40);
      cells['numbers'] =
        rand() < 0.7 ? { value: JSON.stringify(String(est)), text: String(est), updated_at: changed } : { value: null, text: '', updated_at: null };
      const customer = pick(rand, pool<string>('customers'));
      cells['text'] = rand() < 0.6 ? { value: JSON.stringify(customer), text: customer, updated_at: changed } : { value: null, text: '', updated_at: null };
      const desc = `${pick(rand, pool<string>('verbs'))} the ${pick(rand, pool<string>('nouns'))} with ${customer}.`;
      cells['long_text'] =
        rand() < 0.5
          ? { value: JSON.stringify({ text: desc, changed_at: changed }), text: desc, updated_at: changed }
          : { value: null, text: '', updated_at: null };
      cells['checkbox'] =
        rand() < 0.3
          ? { value: JSON.stringify({ checked: 'true', changed_at: changed }), text: 'v', updated_at: changed }
          : { value: null, text: '', updated_at: null };
      // Links without drawing from the PRNG, so the rest of the seeded data is unchanged: two of
      // three items link a roadmap item (ids of the first board are 1_900_000_000 + 7 * index).
      const n0 = counts[0] as number;
      const linked = k % 3 === 2 ? [] : [1_900_000_000 + ((k * 3 + bi) % n0) * 7];
      cells['connect_boards'] = linked.length
        ? { value: JSON.stringify({ linkedPulseIds: linked.map((n) => ({ linkedPulseId: n })), changed_at: changed }), text: '', updated_at: changed }
        : { value: null, text: '', updated_at: null };
      cells['mirror'] = { value: null, text: '', updated_at: null };
      cells['dependency'] =
        k % 4 === 1
          ? { value: JSON.stringify({ linkedPulseIds: [{ linkedPulseId: Number(id) - 7 }], changed_at: changed }), text: '', updated_at: changed }
          : { value: null, text: '', updated_at: null };
      cells['formula'] = { value: null, text: '', updated_at: null };
      activity.push({
        board_id: board.id,
        item_id: id,
        event: 'create_pulse',
        user_id: uid(k),
        at: created,
        data: { board_id: Number(board.id), group_id: group.id, pulse_id: Number(id) },
      });
      state.items.set(id, {
        id,
        name: `${pick(rand, pool<string>('verbs'))} ${pick(rand, pool<string>('nouns'))}`,
        board_id: board.id,
        group_id: group.id,
        state: 'active',
        creator_id: uid(int(0, 5)),
        created_at: isoSeconds(created),
        updated_at: isoSeconds(updated),
        position: k,
        subscriber_ids: [owner.id],
        cells,
      });
    }
  });
  state.nextItemId = itemSeq;
  activity.sort((a, b) => a.at - b.at);
  activity.forEach((a, k) => logActivity(tables, a, `${String(k + 1).padStart(8, '0')}-seed`));

  // Updates (comments) on a share of the items, capped so a 100k board stays light.
  const itemIds = [...state.items.keys()];
  const updateCount = Math.min(Math.ceil(size * 0.4), 20_000);
  const seeded: UpdateRec[] = [];
  for (let k = 0; k < updateCount; k++) {
    const itemId = itemIds[int(0, itemIds.length - 1)] as string;
    const item = state.items.get(itemId) as ItemRec;
    const at = Math.min(EPOCH, Date.parse(item.created_at) + int(0, 45) * 86_400_000 + int(0, 86_399) * 1000);
    const text = pick(rand, pool<string>('comments'));
    seeded.push({
      id: '',
      item_id: itemId,
      creator_id: uid(int(0, 9)),
      body: `<p>${text}</p>`,
      text_body: text,
      created_at: isoSeconds(at),
      updated_at: isoSeconds(at),
      edited_at: isoSeconds(at),
    });
  }
  seeded.sort((a, b) => a.created_at.localeCompare(b.created_at));
  seeded.forEach((u, k) => (u.id = String(3_100_000_000 + k * 3)));
  state.nextUpdateId = seeded.length;
  for (const u of seeded) tables.Update.set(u.id, u);
  const views = { users: 'User', teams: 'Team', workspaces: 'Workspace', tags: 'Tag', boards: 'Board', updates: 'Update' } as const;
  return Object.defineProperties(
    { ...state, tables },
    Object.fromEntries(Object.entries(views).map(([k, t]) => [k, { get: () => [...tables[t].values()], enumerable: true }])),
  ) as unknown as MondayState;
}

export function newItemId(state: MondayState): string {
  const id = String(1_900_000_000 + state.nextItemId * 7);
  state.nextItemId++;
  return id;
}

export function newUpdateId(state: MondayState): string {
  const id = String(3_100_000_000 + state.nextUpdateId * 3);
  state.nextUpdateId++;
  return id;
}

/** Record an activity-log entry (Board.activity_logs), by default one for a change made through the API. */
export function logActivity(tables: MondayState['tables'], e: ActivityEntry, id = `${String(tables.ActivityLogType.size + 1).padStart(8, '0')}-api`): void {
  tables.ActivityLogType.set(id, {
    ...e,
    id,
    entity: e.item_id === null ? 'board' : 'pulse',
    data: JSON.stringify(e.data),
    column_id: e.data['column_id'],
    group_id: e.data['group_id'],
  });
}
