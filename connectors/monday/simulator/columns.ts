/**
 * Column values: how writes are accepted and how reads are shaped.
 *
 * Accepted inputs per column type follow developer.monday.com/api-reference/reference/column-types-reference
 * and docs/change-column-values (e.g. status `{"label":"Done"}` or `{"index":1}` or the plain
 * label, date `{"date":"2024-01-31","time":"12:00:00"}` or "YYYY-MM-DD", people
 * `{"personsAndTeams":[{"id":4616627,"kind":"person"}]}` or "4616627,4616666", numbers "3").
 * An empty string, null or {} clears a value. Stored values are the JSON strings Monday returns
 * in `column_values.value`, with the `text` it shows.
 */
import type { BoardRec, Cell, ColumnDef, MondayState } from './data.ts';
import { MondayApiError, statusLabel } from './data.ts';

const DOCS = 'https://developer.monday.com/api-reference/docs/change-column-values';

function invalid(col: ColumnDef, detail = 'invalid value'): MondayApiError {
  // Wording from the ColumnValueException example in Monday's changelog ("Bug fix: Column value
  // exception error column_type update"), where column_type is the bare type name.
  return new MondayApiError(
    'ColumnValueException',
    `${detail}, please check our API documentation for the correct data structure for this column. ${DOCS}`,
    200,
    {
      column_value: '',
      column_type: col.type,
      column_id: col.id,
    },
  );
}

const EMPTY: Cell = { value: null, text: '', updated_at: null };

function isEmptyInput(v: unknown): boolean {
  return v === null || v === undefined || v === '' || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
}

/** Parse one written value for `col`; may add a status label when `createLabels`. */
export function parseCell(state: MondayState, col: ColumnDef, input: unknown, createLabels: boolean, changedAt: string): Cell {
  if (isEmptyInput(input)) return { ...EMPTY, updated_at: changedAt };
  switch (col.type) {
    case 'text': {
      if (typeof input !== 'string' && typeof input !== 'number') throw invalid(col);
      const s = String(input);
      return { value: JSON.stringify(s), text: s, updated_at: changedAt };
    }
    case 'long_text': {
      const s =
        typeof input === 'string'
          ? input
          : typeof input === 'object' && typeof (input as { text?: unknown }).text === 'string'
            ? (input as { text: string }).text
            : undefined;
      if (s === undefined) throw invalid(col);
      return { value: JSON.stringify({ text: s, changed_at: changedAt }), text: s, updated_at: changedAt };
    }
    case 'numbers': {
      const n = typeof input === 'number' ? input : typeof input === 'string' && /^-?\d+(\.\d+)?$/.test(input.trim()) ? Number(input) : NaN;
      if (!Number.isFinite(n)) throw invalid(col, 'invalid value, please send a number');
      return { value: JSON.stringify(String(n)), text: String(n), updated_at: changedAt };
    }
    case 'status': {
      const labels = col.settings['labels'] as Record<string, string>;
      let index: number | undefined;
      let label: string | undefined;
      if (typeof input === 'string') label = input;
      else if (typeof input === 'number') index = input;
      else if (typeof input === 'object' && input !== null) {
        const o = input as { label?: unknown; index?: unknown };
        if (typeof o.label === 'string') label = o.label;
        else if (typeof o.index === 'number' || (typeof o.index === 'string' && /^\d+$/.test(o.index))) index = Number(o.index);
      }
      if (label !== undefined) {
        const found = Object.entries(labels).find(([, l]) => l === label);
        if (found) index = Number(found[0]);
        else if (createLabels) {
          index =
            Math.max(
              ...Object.keys(labels)
                .map(Number)
                .filter((k) => k !== 5),
              -1,
            ) + 1;
          if (index === 5) index = 6;
          labels[String(index)] = label;
        } else {
          throw new MondayApiError(
            'ColumnValueException',
            `invalid value - label does not exist in column. Please check our API documentation for the correct data structure for this column. ${DOCS}`,
            200,
            {
              column_value: label,
              column_type: 'status',
              column_id: col.id,
            },
          );
        }
      }
      if (index === undefined || statusLabel(col, index) === undefined) throw invalid(col, 'invalid value - index does not exist in column');
      return { value: JSON.stringify({ index, post_id: null, changed_at: changedAt }), text: statusLabel(col, index) as string, updated_at: changedAt };
    }
    case 'date': {
      let date: string | undefined;
      let time: string | undefined;
      if (typeof input === 'string') [date, time] = input.trim().split(/\s+/);
      else if (typeof input === 'object' && input !== null) {
        const o = input as { date?: unknown; time?: unknown };
        if (typeof o.date === 'string') date = o.date;
        if (typeof o.time === 'string') time = o.time;
      }
      if (date === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`)))
        throw invalid(col, 'invalid value - date must be YYYY-MM-DD');
      if (time !== undefined && !/^\d{2}:\d{2}(:\d{2})?$/.test(time)) throw invalid(col, 'invalid value - time must be HH:MM:SS');
      const t = time === undefined ? undefined : time.length === 5 ? `${time}:00` : time;
      return {
        value: JSON.stringify({ date, ...(t ? { time: t } : {}), changed_at: changedAt }),
        text: t ? `${date} ${t.slice(0, 5)}` : date,
        updated_at: changedAt,
      };
    }
    case 'people': {
      let entries: { id: number; kind: 'person' | 'team' }[];
      if (typeof input === 'string' || typeof input === 'number') {
        entries = String(input)
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
          .map((s) => ({ id: Number(s), kind: 'person' as const }));
      } else if (typeof input === 'object' && input !== null && Array.isArray((input as { personsAndTeams?: unknown }).personsAndTeams)) {
        entries = (input as { personsAndTeams: unknown[] }).personsAndTeams.map((e) => {
          const o = e as { id?: unknown; kind?: unknown };
          return { id: Number(o.id), kind: o.kind === 'team' ? ('team' as const) : ('person' as const) };
        });
      } else throw invalid(col);
      const names: string[] = [];
      for (const e of entries) {
        const rec = e.kind === 'team' ? state.teams.find((t) => t.id === String(e.id)) : state.users.find((u) => u.id === String(e.id));
        if (!Number.isInteger(e.id) || rec === undefined) throw invalid(col, `invalid value - ${e.kind} ${String(e.id)} does not exist`);
        names.push(rec.name);
      }
      if (entries.length === 0) return { ...EMPTY, updated_at: changedAt };
      return { value: JSON.stringify({ personsAndTeams: entries, changed_at: changedAt }), text: names.join(', '), updated_at: changedAt };
    }
    case 'checkbox': {
      const checked =
        typeof input === 'boolean'
          ? input
          : typeof input === 'string'
            ? input === 'true'
            : typeof input === 'object' && input !== null
              ? String((input as { checked?: unknown }).checked) === 'true'
              : undefined;
      if (checked === undefined) throw invalid(col);
      return checked
        ? { value: JSON.stringify({ checked: 'true', changed_at: changedAt }), text: 'v', updated_at: changedAt }
        : { ...EMPTY, updated_at: changedAt };
    }
    case 'board_relation':
    case 'dependency': {
      // column-types-reference (connect boards, dependency): {"item_ids": [123, 456]}.
      const ids =
        typeof input === 'object' && input !== null && Array.isArray((input as { item_ids?: unknown }).item_ids)
          ? (input as { item_ids: unknown[] }).item_ids.map(Number)
          : undefined;
      if (ids === undefined || ids.some((n) => !Number.isInteger(n) || !state.items.has(String(n))))
        throw invalid(col, 'invalid value - item_ids must list existing items');
      if (ids.length === 0) return { ...EMPTY, updated_at: changedAt };
      return { value: JSON.stringify({ linkedPulseIds: ids.map((n) => ({ linkedPulseId: n })), changed_at: changedAt }), text: '', updated_at: changedAt };
    }
    default:
      throw invalid(col, 'this column type cannot be changed through the API');
  }
}

function linkedIds(cell: Cell | undefined): string[] {
  if (cell?.value == null) return [];
  const v = JSON.parse(cell.value) as { linkedPulseIds?: { linkedPulseId: number }[] };
  return (v.linkedPulseIds ?? []).map((l) => String(l.linkedPulseId));
}

/**
 * display_value of a connected column, computed when read as monday does: linked item names
 * (connect boards, dependency), the linked items' status labels (mirror), the computed number
 * (formula: the board's "{numbers} / 8").
 */
function displayValue(state: MondayState, col: ColumnDef, cells: Record<string, Cell>): string {
  const live = (ids: string[]) => ids.map((id) => state.items.get(id)).filter((i) => i !== undefined && i.state !== 'deleted');
  switch (col.type) {
    case 'board_relation':
    case 'dependency':
      return live(linkedIds(cells[col.id]))
        .map((i) => i?.name)
        .join(', ');
    case 'mirror':
      return live(linkedIds(cells['connect_boards']))
        .map((i) => i?.cells['status']?.text ?? '')
        .join(', ');
    case 'formula': {
      const n = cells['numbers']?.text;
      return n === undefined || n === '' ? '' : String(Math.round((Number(n) / 8) * 100) / 100);
    }
    default:
      return '';
  }
}

/** A JSON argument given as text (or already parsed). Changelog "new descriptive JsonParseException error": status 400 inside the error, json in error_data. */
export function parseJsonArg(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    throw new MondayApiError('JsonParseException', 'Syntax error in JSON input', 400, { json: v.slice(0, 200) });
  }
}

/**
 * Parse a `column_values` argument (JSON scalar: Monday documents a JSON-encoded string; an
 * object is accepted too) into per-column cells plus an optional new name. Validates everything
 * before anything is written, so a failed mutation changes nothing.
 */
export function parseColumnValues(
  state: MondayState,
  board: BoardRec,
  raw: unknown,
  createLabels: boolean,
  changedAt: string,
): { cells: Record<string, Cell>; name?: string } {
  const obj = parseJsonArg(raw);
  if (obj === null || obj === undefined) return { cells: {} };
  if (typeof obj !== 'object' || Array.isArray(obj)) {
    throw new MondayApiError('JsonParseException', 'Syntax error in JSON input: column_values must be a JSON object', 400, { json: String(raw).slice(0, 200) });
  }
  const cells: Record<string, Cell> = {};
  let name: string | undefined;
  for (const [colId, value] of Object.entries(obj as Record<string, unknown>)) {
    const col = board.columns.find((c) => c.id === colId);
    if (col === undefined) {
      throw new MondayApiError('InvalidColumnIdException', "This column ID doesn't exist for the board", 200, { column_id: colId, board_id: Number(board.id) });
    }
    if (col.type === 'name') {
      if (typeof value !== 'string' || value.trim() === '') throw invalid(col, 'invalid value - name must be a non-empty string');
      name = value;
      continue;
    }
    cells[colId] = parseCell(state, col, value, createLabels, changedAt);
  }
  return name === undefined ? { cells } : { cells, name };
}

/** The type-specific fields of a column value for reads (StatusValue.label, DateValue.date...). */
export function cellView(col: ColumnDef, cell: Cell, state?: MondayState, cells?: Record<string, Cell>): Record<string, unknown> {
  const parsed = cell.value === null ? null : (JSON.parse(cell.value) as unknown);
  if (col.type === 'board_relation' || col.type === 'dependency' || col.type === 'mirror' || col.type === 'formula') {
    const display = state && cells ? displayValue(state, col, cells) : '';
    const ids = col.type === 'mirror' || col.type === 'formula' ? [] : linkedIds(cell);
    return {
      id: col.id,
      column: col,
      type: col.type,
      text: null,
      value: cell.value,
      updated_at: cell.updated_at,
      display_value: display,
      is_leaf: true,
      linked_item_ids: ids,
      linked_items: ids.map((id) => state?.items.get(id)).filter((i) => i !== undefined),
      mirrored_items: [],
      dependency_links: [],
    };
  }
  const o = (parsed !== null && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
  const base = { id: col.id, column: col, type: col.type, text: cell.text, value: cell.value, updated_at: cell.updated_at };
  switch (col.type) {
    case 'status': {
      const index = typeof o['index'] === 'number' ? o['index'] : null;
      const colors = col.settings['labels_colors'] as Record<string, { color: string; border: string }> | undefined;
      const style = index === null ? undefined : colors?.[String(index)];
      return {
        ...base,
        index,
        label: index === null ? null : (statusLabel(col, index) ?? null),
        is_done: index === null ? false : ((col.settings['done_colors'] as number[] | undefined) ?? []).includes(index),
        label_style: style ? { color: style.color, border: style.border } : null,
        update_id: null,
      };
    }
    case 'date':
      return { ...base, date: (o['date'] as string | undefined) ?? null, time: (o['time'] as string | undefined) ?? null, icon: null };
    case 'numbers': {
      const unit = col.settings['unit'] as { symbol?: string; direction?: string } | undefined;
      return { ...base, number: typeof parsed === 'string' ? Number(parsed) : null, symbol: unit?.symbol ?? null, direction: unit?.direction ?? null };
    }
    case 'people':
      return { ...base, persons_and_teams: Array.isArray(o['personsAndTeams']) ? o['personsAndTeams'] : [] };
    case 'checkbox':
      return { ...base, checked: o['checked'] === 'true' };
    default:
      return base;
  }
}
