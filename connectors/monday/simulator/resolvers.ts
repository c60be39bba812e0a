/**
 * Resolvers for the simulator's schema, attached to a `buildSchema` schema. They read and write
 * the MondayState; application errors are thrown as MondayApiError and end up in `errors` with
 * Monday's codes.
 */
import { randomBytes } from 'node:crypto';
import type { GraphQLFieldResolver } from 'graphql';
import type { GraphqlContext } from '../../../src/simulator/graphql-simulator.ts';
import {
  boardOrder,
  isoSeconds,
  logActivity,
  newItemId,
  newUpdateId,
  type BoardRec,
  type Cell,
  type ColumnDef,
  type GroupDef,
  type ItemRec,
  type MondayState,
  type UpdateRec,
  type WebhookRec,
} from './data.ts';
import { cellView, parseCell, parseColumnValues, parseJsonArg } from './columns.ts';
import { statusLabels } from './data.ts';
import { MondayApiError } from './data.ts';

/** Per-request context: the generic simulator's (clock, API version, complexity charge, cursor pages) and the account's. */
export interface ResolverContext extends GraphqlContext {
  state: MondayState;
  /** The user the token belongs to. */
  meId: string;
}

interface ItemsQueryRule {
  column_id: string;
  compare_value: unknown;
  compare_attribute?: string | null;
  operator?: string | null;
}
interface ItemsQueryGroup {
  rules?: ItemsQueryRule[] | null;
  groups?: ItemsQueryGroup[] | null;
  operator?: 'and' | 'or' | null;
}
interface ItemsQuery extends ItemsQueryGroup {
  ids?: string[] | null;
  order_by?: { column_id: string; direction?: 'asc' | 'desc' | null }[] | null;
}

function cellText(item: ItemRec, columnId: string): string {
  if (columnId === 'name') return item.name;
  // Pseudo-columns every board has for ordering (changelog: items_page order_by).
  if (columnId === '__last_updated__') return item.updated_at;
  if (columnId === '__creation_log__') return item.created_at;
  return item.cells[columnId]?.text ?? '';
}

function ruleMatches(board: BoardRec, item: ItemRec, rule: ItemsQueryRule): boolean {
  const col = board.columns.find((c) => c.id === rule.column_id);
  if (col === undefined) throw new MondayApiError('InvalidColumnIdException', "This column ID doesn't exist for the board", 200, { column_id: rule.column_id });
  const text = cellText(item, col.id);
  const values = (Array.isArray(rule.compare_value) ? rule.compare_value : [rule.compare_value]).map((v) => String(v));
  const cell = item.cells[col.id];
  const parsed = cell?.value ? (JSON.parse(cell.value) as unknown) : null;
  // Status rules compare label indexes; people rules compare "person-<id>"; others the text.
  const keys: string[] =
    col.type === 'status'
      ? [String((parsed as { index?: number } | null)?.index ?? 5)]
      : col.type === 'people'
        ? ((parsed as { personsAndTeams?: { id: number; kind: string }[] } | null)?.personsAndTeams ?? []).map((p) => `${p.kind}-${String(p.id)}`)
        : [text];
  const num = Number(text);
  const op = rule.operator ?? 'any_of';
  switch (op) {
    case 'any_of':
      return keys.some((k) => values.includes(k)) || (col.type === 'status' && values.includes(text));
    case 'not_any_of':
      return !keys.some((k) => values.includes(k));
    case 'is_empty':
      return text === '';
    case 'is_not_empty':
      return text !== '';
    case 'contains_text':
      return values.some((v) => text.toLowerCase().includes(v.toLowerCase()));
    case 'not_contains_text':
      return !values.some((v) => text.toLowerCase().includes(v.toLowerCase()));
    case 'starts_with':
      return values.some((v) => text.toLowerCase().startsWith(v.toLowerCase()));
    case 'ends_with':
      return values.some((v) => text.toLowerCase().endsWith(v.toLowerCase()));
    case 'greater_than':
      return text !== '' && (col.type === 'numbers' ? num > Number(values[0]) : text > (values[0] as string));
    case 'greater_than_or_equals':
      return text !== '' && (col.type === 'numbers' ? num >= Number(values[0]) : text >= (values[0] as string));
    case 'lower_than':
      return text !== '' && (col.type === 'numbers' ? num < Number(values[0]) : text < (values[0] as string));
    case 'lower_than_or_equal':
      return text !== '' && (col.type === 'numbers' ? num <= Number(values[0]) : text <= (values[0] as string));
    case 'between':
      return (
        text !== '' &&
        (col.type === 'numbers' ? num >= Number(values[0]) && num <= Number(values[1]) : text >= (values[0] as string) && text <= (values[1] as string))
      );
    default:
      throw new MondayApiError('InvalidArgumentException', `The simulator does not implement the ${op} operator`, 200, { operator: op });
  }
}

function groupMatches(board: BoardRec, item: ItemRec, g: ItemsQueryGroup): boolean {
  const results = [...(g.rules ?? []).map((r) => ruleMatches(board, item, r)), ...(g.groups ?? []).map((sub) => groupMatches(board, item, sub))];
  if (results.length === 0) return true;
  return (g.operator ?? 'and') === 'or' ? results.some(Boolean) : results.every(Boolean);
}

/** items_page on a board (or one of its groups): first page from a fresh snapshot, or a page from `cursor`. */
function itemsPage(
  ctx: ResolverContext,
  board: BoardRec,
  groupId: string | null,
  args: { cursor?: string | null; limit: number; query_params?: ItemsQuery | null },
) {
  // With a cursor, monday ignores query_params: the cursor carries the original query.
  if (args.cursor) {
    const p = ctx.cursorPage([], args.limit, args.cursor);
    return { cursor: p.cursor, items: p.rows };
  }
  let items = boardOrder(ctx.state, board)
    .map((id) => ctx.state.items.get(id) as ItemRec)
    .filter((i) => i.state === 'active' && (groupId === null || i.group_id === groupId));
  const q = args.query_params;
  if (q) {
    if (q.ids) {
      if (q.ids.length > 100) throw new MondayApiError('InvalidArgumentException', 'query_params.ids accepts at most 100 IDs', 200, {});
      const want = new Set(q.ids.map(String));
      items = items.filter((i) => want.has(i.id));
    }
    items = items.filter((i) => groupMatches(board, i, q));
    for (const ob of [...(q.order_by ?? [])].reverse()) {
      const dir = ob.direction === 'desc' ? -1 : 1;
      const col = board.columns.find((c) => c.id === ob.column_id);
      items = [...items].sort((a, b) => {
        const x = cellText(a, ob.column_id);
        const y = cellText(b, ob.column_id);
        return dir * (col?.type === 'numbers' && x !== '' && y !== '' ? Number(x) - Number(y) : x.localeCompare(y));
      });
    }
  }
  const p = ctx.cursorPage(items as unknown as Record<string, unknown>[], args.limit);
  return { cursor: p.cursor, items: p.rows };
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** limit/page slicing as Monday's list fields do it (page starts at 1; no limit = everything). */
function paginate<T>(list: T[], limit: number | null | undefined, page: number | null | undefined): T[] {
  if (limit === null || limit === undefined) return (page ?? 1) > 1 ? [] : list;
  if (limit < 1) return [];
  const p = Math.max(1, page ?? 1);
  return list.slice((p - 1) * limit, p * limit);
}

function boardOf(ctx: ResolverContext, id: unknown): BoardRec {
  const board = ctx.state.boards.find((b) => b.id === String(id) && b.state !== 'deleted');
  if (board === undefined) {
    throw new MondayApiError('InvalidBoardIdException', 'The board does not exist. Please check your board ID and try again', 200, { board_id: Number(id) });
  }
  return board;
}

function itemOf(ctx: ResolverContext, id: unknown, board?: BoardRec): ItemRec {
  const item = id === null || id === undefined ? undefined : ctx.state.items.get(String(id));
  if (item === undefined || item.state === 'deleted' || (board !== undefined && item.board_id !== board.id)) {
    throw new MondayApiError('InvalidItemIdException', 'This item does not exist on the board. Please check your item ID and try again', 200, {
      item_id: Number(id),
    });
  }
  return item;
}

function stripHtml(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .trim();
}

type Resolvers = Record<string, Record<string, GraphQLFieldResolver<unknown, ResolverContext, Record<string, never>>>>;
// Resolvers receive loosely typed args; each one declares the shape it reads.
type Args = Record<string, unknown>;
const r = <S>(fn: (src: S, args: Args, ctx: ResolverContext) => unknown) =>
  fn as unknown as GraphQLFieldResolver<unknown, ResolverContext, Record<string, never>>;

// ---------------------------------------------------------------------------------------------
// Writes

function applyCells(item: ItemRec, cells: Record<string, Cell>, name: string | undefined, at: string): void {
  Object.assign(item.cells, cells);
  if (name !== undefined) item.name = name;
  item.updated_at = at;
}

const mutations = {
  /**
   * create_webhook: monday first POSTs {"challenge": ...} to the URL and creates the
   * subscription only when the answer echoes it (sidecar: the SDL cannot say so; monday's docs,
   * "Webhooks": "verify the URL ... respond with the same challenge").
   */
  async create_webhook(ctx: ResolverContext, args: Args): Promise<WebhookRec> {
    const board = boardOf(ctx, args['board_id']);
    const url = String(args['url']);
    if (!/^https?:\/\//.test(url)) throw new MondayApiError('InvalidArgumentException', 'Invalid URL', 200, { url });
    const challenge = randomBytes(24).toString('base64url');
    let echoed: boolean;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ challenge }),
        signal: AbortSignal.timeout(5000),
      });
      const answer = (await res.json().catch(() => undefined)) as { challenge?: unknown } | undefined;
      echoed = res.ok && answer?.challenge === challenge;
    } catch {
      echoed = false;
    }
    if (!echoed) throw new MondayApiError('InvalidArgumentException', 'Failed to communicate with URL provided.', 200, { url });
    const hooks = ctx.state.tables.Webhook;
    const hook: WebhookRec = {
      id: String(500_000_000 + hooks.size + 1),
      board_id: board.id,
      event: String(args['event']),
      config: typeof args['config'] === 'string' ? args['config'] : args['config'] == null ? null : JSON.stringify(args['config']),
      url,
    };
    hooks.set(hook.id, hook);
    return hook;
  },

  create_item(ctx: ResolverContext, args: Args): ItemRec {
    const board = boardOf(ctx, args['board_id']);
    const name = String(args['item_name']);
    if (name.length > 255)
      throw new MondayApiError('ItemNameTooLongException', 'Item name is too long. The maximum length is 255 characters', 200, { max_length: 255 });
    if (name.trim() === '') throw new MondayApiError('InvalidArgumentException', "Item name can't be empty", 200, {});
    let group = board.groups[0] as GroupDef;
    if (args['group_id'] !== null && args['group_id'] !== undefined) {
      const g = board.groups.find((x) => x.id === args['group_id'] && !x.deleted);
      if (g === undefined)
        throw new MondayApiError('InvalidGroupIdException', 'Group not found', 200, { group_id: args['group_id'], board_id: Number(board.id) });
      group = g;
    }
    const at = isoSeconds(ctx.now());
    const parsed = parseColumnValues(ctx.state, board, args['column_values'], args['create_labels_if_missing'] === true, at);
    const siblings = [...ctx.state.items.values()].filter((i) => i.board_id === board.id && i.group_id === group.id);
    // New items go to the top of their group unless placed relative to another item.
    let position = siblings.reduce((m, i) => Math.min(m, i.position), 0) - 1;
    if (args['relative_to'] !== null && args['relative_to'] !== undefined) {
      const rel = itemOf(ctx, args['relative_to'], board);
      group = board.groups.find((g) => g.id === rel.group_id) ?? group;
      position = rel.position + (args['position_relative_method'] === 'after_at' ? 0.5 : -0.5);
    }
    const cells: Record<string, Cell> = {};
    for (const col of board.columns) if (col.type !== 'name') cells[col.id] = { value: null, text: '', updated_at: null };
    const item: ItemRec = {
      id: newItemId(ctx.state),
      name: parsed.name ?? name,
      board_id: board.id,
      group_id: group.id,
      state: 'active',
      creator_id: ctx.meId,
      created_at: at,
      updated_at: at,
      position,
      subscriber_ids: [ctx.meId],
      cells: { ...cells, ...parsed.cells },
    };
    ctx.state.items.set(item.id, item);
    board.orderCache = null;
    board.updated_at = at;
    logActivity(ctx.state.tables, {
      board_id: board.id,
      item_id: item.id,
      event: 'create_pulse',
      user_id: ctx.meId,
      at: ctx.now(),
      data: { board_id: Number(board.id), group_id: group.id, pulse_id: Number(item.id), pulse_name: item.name },
    });
    return item;
  },

  create_subitem(ctx: ResolverContext, args: Args): ItemRec {
    const parent = itemOf(ctx, args['parent_item_id']);
    const board = ctx.state.boards.find((b) => b.id === parent.board_id) as BoardRec;
    // The first subitem creates the parent board's subitems board (type sub_items_board).
    let sub = ctx.state.boards.find((b) => b.id === board.subitems_board_id);
    if (sub === undefined) {
      const at = isoSeconds(ctx.now());
      sub = {
        ...board,
        id: String(Number(board.id) + 7),
        name: `Subitems of ${board.name}`,
        description: null,
        type: 'sub_items_board',
        columns: board.columns.filter((c) => ['name', 'person', 'status', 'date4'].includes(c.id)),
        groups: [
          { id: 'topics', board_id: String(Number(board.id) + 7), title: 'Subitems', color: '#579bfc', position: '65536', archived: false, deleted: false },
        ],
        created_at: at,
        updated_at: at,
        orderCache: null,
      };
      delete sub.subitems_board_id;
      ctx.state.tables.Board.set(sub.id, sub);
      board.subitems_board_id = sub.id;
    }
    const item = mutations.create_item(ctx, {
      board_id: sub.id,
      item_name: args['item_name'],
      column_values: args['column_values'],
      create_labels_if_missing: args['create_labels_if_missing'],
    });
    item.parent_id = parent.id;
    return item;
  },

  create_group(ctx: ResolverContext, args: Args) {
    const board = boardOf(ctx, args['board_id']);
    const title = String(args['group_name'] ?? '');
    if (title.trim() === '') throw new MondayApiError('InvalidArgumentException', "Group name can't be empty", 200, {});
    if (title.length > 255) throw new MondayApiError('InvalidArgumentException', 'Group name is too long. The maximum length is 255 characters', 200, {});
    const id = `group_${randomBytes(4).toString('hex')}`;
    const color = typeof args['group_color'] === 'string' ? args['group_color'] : '#a25ddc';
    // New groups go to the top unless placed relative to another group (reference/groups#create-a-group).
    const positions = board.groups.map((g) => Number(g.position));
    let position = Math.min(...positions) / 2;
    if (args['relative_to'] !== null && args['relative_to'] !== undefined) {
      const rel = board.groups.find((g) => g.id === args['relative_to'] && !g.deleted);
      if (rel === undefined)
        throw new MondayApiError('InvalidGroupIdException', 'Group not found', 200, { group_id: args['relative_to'], board_id: Number(board.id) });
      position = Number(rel.position) + (args['position_relative_method'] === 'after_at' ? 1 : -1);
    }
    const group = { id, board_id: board.id, title, color, position: String(position), archived: false, deleted: false };
    board.groups.push(group);
    board.groups.sort((a, b) => Number(a.position) - Number(b.position));
    board.orderCache = null;
    logActivity(ctx.state.tables, {
      board_id: board.id,
      item_id: null,
      event: 'create_group',
      user_id: ctx.meId,
      at: ctx.now(),
      data: { board_id: Number(board.id), group_id: id, group_title: title },
    });
    return group;
  },

  create_column(ctx: ResolverContext, args: Args): ColumnDef {
    const board = boardOf(ctx, args['board_id']);
    const type = String(args['column_type']);
    const modelled = ['text', 'long_text', 'numbers', 'status', 'date', 'people', 'checkbox'];
    if (!modelled.includes(type))
      throw new MondayApiError('InvalidArgumentException', `The simulator does not model ${type} columns`, 200, { column_type: type });
    const title = String(args['title']);
    const id = typeof args['id'] === 'string' && args['id'] !== '' ? args['id'] : `${type}_${randomBytes(3).toString('hex')}`;
    if (board.columns.some((c) => c.id === id))
      throw new MondayApiError('InvalidArgumentException', 'Column id already exists on the board', 200, { column_id: id });
    const defaults = parseJsonArg(args['defaults'] ?? null) as Record<string, unknown> | null;
    const settings: Record<string, unknown> =
      type === 'status'
        ? { done_colors: [1], labels: { ...statusLabels(), ...((defaults?.['labels'] as Record<string, string> | undefined) ?? {}) }, labels_colors: {} }
        : (defaults ?? {});
    const col: ColumnDef = {
      id,
      title,
      type: type as ColumnDef['type'],
      description: typeof args['description'] === 'string' ? args['description'] : null,
      width: null,
      archived: false,
      settings,
    };
    const after =
      args['after_column_id'] === null || args['after_column_id'] === undefined ? -1 : board.columns.findIndex((c) => c.id === args['after_column_id']);
    if (after >= 0) board.columns.splice(after + 1, 0, col);
    else board.columns.push(col);
    for (const item of ctx.state.items.values()) if (item.board_id === board.id) item.cells[id] = { value: null, text: '', updated_at: null };
    logActivity(ctx.state.tables, {
      board_id: board.id,
      item_id: null,
      event: 'create_column',
      user_id: ctx.meId,
      at: ctx.now(),
      data: { board_id: Number(board.id), column_id: id, column_title: title, column_type: type },
    });
    return col;
  },

  change_multiple_column_values(ctx: ResolverContext, args: Args): ItemRec {
    const board = boardOf(ctx, args['board_id']);
    const item = itemOf(ctx, args['item_id'], board);
    const at = isoSeconds(ctx.now());
    const parsed = parseColumnValues(ctx.state, board, args['column_values'], args['create_labels_if_missing'] === true, at);
    applyCells(item, parsed.cells, parsed.name, at);
    board.updated_at = at;
    for (const columnId of Object.keys(parsed.cells))
      logActivity(ctx.state.tables, {
        board_id: board.id,
        item_id: item.id,
        event: 'update_column_value',
        user_id: ctx.meId,
        at: ctx.now(),
        data: { board_id: Number(board.id), pulse_id: Number(item.id), column_id: columnId },
      });
    if (parsed.name !== undefined)
      logActivity(ctx.state.tables, {
        board_id: board.id,
        item_id: item.id,
        event: 'update_name',
        user_id: ctx.meId,
        at: ctx.now(),
        data: { board_id: Number(board.id), pulse_id: Number(item.id) },
      });
    return item;
  },

  change_column_value(ctx: ResolverContext, args: Args): ItemRec {
    const board = boardOf(ctx, args['board_id']);
    const item = itemOf(ctx, args['item_id'], board);
    const at = isoSeconds(ctx.now());
    const parsed = parseColumnValues(
      ctx.state,
      board,
      JSON.stringify({ [String(args['column_id'])]: parseJsonArg(args['value']) }),
      args['create_labels_if_missing'] === true,
      at,
    );
    applyCells(item, parsed.cells, parsed.name, at);
    return item;
  },

  change_simple_column_value(ctx: ResolverContext, args: Args): ItemRec {
    const board = boardOf(ctx, args['board_id']);
    const item = itemOf(ctx, args['item_id'], board);
    const col = board.columns.find((c) => c.id === args['column_id']);
    if (col === undefined)
      throw new MondayApiError('InvalidColumnIdException', "This column ID doesn't exist for the board", 200, { column_id: args['column_id'] });
    const at = isoSeconds(ctx.now());
    if (col.type === 'name') applyCells(item, {}, String(args['value'] ?? ''), at);
    else applyCells(item, { [col.id]: parseCell(ctx.state, col, args['value'] ?? null, args['create_labels_if_missing'] === true, at) }, undefined, at);
    return item;
  },

  archive_item: (ctx: ResolverContext, args: Args): ItemRec => retire(ctx, args, 'archived', 'archive_pulse'),
  delete_item: (ctx: ResolverContext, args: Args): ItemRec => retire(ctx, args, 'deleted', 'delete_pulse'),

  create_update(ctx: ResolverContext, args: Args): UpdateRec {
    if (args['parent_id'] !== null && args['parent_id'] !== undefined) {
      throw new MondayApiError('InvalidArgumentException', 'The simulator does not model replies (parent_id)', 200, { parent_id: args['parent_id'] });
    }
    if (args['item_id'] === null || args['item_id'] === undefined)
      throw new MondayApiError('InvalidArgumentException', 'item_id is required to create an update', 200, {});
    const item = itemOf(ctx, args['item_id']);
    const body = String(args['body']);
    if (body.trim() === '') throw new MondayApiError('InvalidArgumentException', "Update body can't be empty", 200, {});
    const at = isoSeconds(ctx.now());
    const update: UpdateRec = {
      id: newUpdateId(ctx.state),
      item_id: item.id,
      creator_id: ctx.meId,
      body,
      text_body: stripHtml(body),
      created_at: at,
      updated_at: at,
      edited_at: at,
    };
    ctx.state.tables.Update.set(update.id, update);
    item.updated_at = at;
    return update;
  },

  edit_update(ctx: ResolverContext, args: Args): UpdateRec {
    const update = ctx.state.tables.Update.get(String(args['id']));
    if (update === undefined) throw new MondayApiError('ResourceNotFoundException', 'Update not found', 404, { update_id: Number(args['id']) });
    update.body = String(args['body']);
    update.text_body = stripHtml(update.body);
    update.updated_at = update.edited_at = isoSeconds(ctx.now());
    return update;
  },

  delete_update(ctx: ResolverContext, args: Args): UpdateRec {
    const update = ctx.state.tables.Update.get(String(args['id']));
    if (update === undefined) throw new MondayApiError('ResourceNotFoundException', 'Update not found', 404, { update_id: Number(args['id']) });
    ctx.state.tables.Update.delete(update.id);
    return update;
  },

  create_or_get_tag(ctx: ResolverContext, args: Args) {
    const name = String(args['tag_name'] ?? '').trim();
    if (name === '') throw new MondayApiError('InvalidArgumentException', "Tag name can't be empty", 200, {});
    let tag = ctx.state.tags.find((t) => t.name === name);
    if (tag === undefined) {
      tag = { id: String(21_500_000 + ctx.state.tags.length * 3), name, color: '#c4c4c4' };
      ctx.state.tables.Tag.set(tag.id, tag);
    }
    return tag;
  },
};

/** archive_item, delete_item: the item's state, its board's order and the activity log. */
function retire(ctx: ResolverContext, args: Args, state: 'archived' | 'deleted', event: string): ItemRec {
  const item = itemOf(ctx, args['item_id']);
  item.state = state;
  item.updated_at = isoSeconds(ctx.now());
  const board = ctx.state.tables.Board.get(item.board_id);
  if (board) board.orderCache = null;
  logActivity(ctx.state.tables, {
    board_id: item.board_id,
    item_id: item.id,
    event,
    user_id: ctx.meId,
    at: ctx.now(),
    data: { board_id: Number(item.board_id), pulse_id: Number(item.id), pulse_name: item.name },
  });
  return item;
}

// ---------------------------------------------------------------------------------------------
// Resolver map

function buildResolvers(): Resolvers {
  return {
    Query: {
      account: r((_s, _a, ctx) => ctx.state.account),
      items: r((_s, a, ctx) => {
        const ids = a['ids'] as string[] | null | undefined;
        let list: ItemRec[];
        if (ids) {
          if (ids.length > 100)
            throw new MondayApiError('InvalidArgumentException', 'You can query up to 100 items by ID at once', 200, { ids_count: ids.length });
          list = ids.map((id) => ctx.state.items.get(String(id))).filter((i): i is ItemRec => i !== undefined && i.state !== 'deleted');
        } else {
          list = [...ctx.state.items.values()].filter((i) => i.state !== 'deleted');
          if (a['newest_first']) list.reverse();
          list = paginate(list, a['limit'] as number | null | undefined, a['page'] as number | null | undefined);
        }
        return a['exclude_nonactive'] ? list.filter((i) => i.state === 'active') : list;
      }),
    },
    Mutation: {
      ...Object.fromEntries(Object.entries(mutations).map(([name, fn]) => [name, r((_s, a, ctx) => fn(ctx, a))])),
    },
    User: {
      account: r((_s, _a, ctx) => ctx.state.account),
    },
    Board: {
      items_count: r<BoardRec>((b, _a, ctx) => boardOrder(ctx.state, b).filter((id) => ctx.state.items.get(id)?.state === 'active').length),
      items_page: r<BoardRec>((b, a, ctx) => itemsPage(ctx, b, null, a as { limit: number })),
      top_group: r<BoardRec>((b) => b.groups.find((g) => !g.deleted)),
    },
    Column: {
      settings_str: r<ColumnDef>((c) => JSON.stringify(c.settings)),
    },
    Group: {
      items_page: r<GroupDef>((g, a, ctx) => itemsPage(ctx, boardOf(ctx, g.board_id), g.id, a as { limit: number })),
    },
    Item: {
      // The ids and types arguments are the sidecar's (graphql.lists).
      column_values: r<ItemRec>((i, _a, ctx) =>
        (ctx.state.tables.Board.get(i.board_id) as BoardRec).columns
          .filter((c) => c.type !== 'name' && !c.archived)
          .map((c) => cellView(c, i.cells[c.id] ?? { value: null, text: '', updated_at: null }, ctx.state, i.cells)),
      ),
      group: r<ItemRec>((i, _a, ctx) => (ctx.state.tables.Board.get(i.board_id) as BoardRec).groups.find((x) => x.id === i.group_id) ?? null),
    },
  };
}

/** The resolvers by "Type.field" for the generic GraphQL simulator, over the account `base()` names. */
export function codedResolvers(base: () => Omit<ResolverContext, keyof GraphqlContext>): Record<string, GraphQLFieldResolver<unknown, GraphqlContext>> {
  const out: Record<string, GraphQLFieldResolver<unknown, GraphqlContext>> = {};
  for (const [typeName, fields] of Object.entries(buildResolvers())) {
    for (const [fieldName, resolve] of Object.entries(fields)) {
      out[`${typeName}.${fieldName}`] = (src, args, ctx, info) => resolve(src, args as never, { ...ctx, ...base() }, info);
    }
  }
  return out;
}
