/**
 * Results fit for a model's context: `fields` projection and a byte budget. A list is cut at a
 * record boundary and says how many records were left out and how to reach them; a single record
 * larger than the budget is left out whole with the same kind of notice.
 */
import { SwitchboardError } from '../errors/index.ts';
import { projectFields, type Doc } from '../search/document.ts';

/** Default byte budget of one execute or search result (the JSON handed to the model). */
export const DEFAULT_MAX_OUTPUT_BYTES = 20_000;
/** Smallest budget accepted: below it, no useful record fits beside the notice. */
export const MIN_MAX_OUTPUT_BYTES = 1_024;
/** Environment variable setting the budget (local and hosted). */
export const MAX_OUTPUT_BYTES_ENV = 'SWITCHBOARD_MCP_MAX_OUTPUT_BYTES';

/** A budget from a flag or an environment variable, or a clear error naming where it came from. */
export function maxOutputBytesArg(value: string | undefined, source: string): number {
  if (value === undefined || value.trim() === '') return DEFAULT_MAX_OUTPUT_BYTES;
  const n = Number(value);
  if (!Number.isInteger(n) || n < MIN_MAX_OUTPUT_BYTES) {
    throw new SwitchboardError('invalid_params', `${source} must be an integer of at least ${MIN_MAX_OUTPUT_BYTES} (bytes), got "${value}"`);
  }
  return n;
}

/** What was left out of a result, and how to get it. */
export interface Truncation {
  budget_bytes: number;
  records_returned: number;
  records_omitted: number;
  next: string;
}

export interface Capped {
  /** The result to return: the envelope, possibly with fewer records, plus `truncated` when cut. */
  value: Record<string, unknown>;
  truncated?: Truncation;
}

const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? 'null');

/** Room kept for the `truncated` notice added to a cut result. */
const NOTICE_RESERVE = 600;

/** `fields` checked (non-empty strings) and split into paths for projectFields. */
export function fieldPaths(fields: unknown): string[][] | undefined {
  if (fields === undefined) return undefined;
  if (!Array.isArray(fields) || fields.length === 0 || fields.some((f) => typeof f !== 'string' || f === '')) {
    throw new SwitchboardError('invalid_params', 'fields must be a non-empty array of field names (dotted paths allowed)', {
      errors: [{ path: '/fields', message: 'must be a non-empty array of non-empty strings' }],
    });
  }
  return (fields as string[]).map((f) => f.split('.'));
}

/** An execute envelope with only the given fields of each record (list) or of the record (get/create/update). */
export function projectEnvelope(envelope: { data: unknown; meta?: unknown }, paths: string[][] | undefined): { data: unknown; meta?: unknown } {
  if (paths === undefined) return envelope;
  const one = (r: unknown): unknown => (r !== null && typeof r === 'object' && !Array.isArray(r) ? projectFields(r as Doc, paths) : r);
  return { ...envelope, data: Array.isArray(envelope.data) ? envelope.data.map(one) : one(envelope.data) };
}

/**
 * Cut `envelope` (`{data, meta?}`) to `budget` bytes of JSON: as many leading records of a list
 * as fit (at least the notice always fits), or a single record only when it fits. `next` says how
 * to get what was left out.
 */
export function capEnvelope(envelope: { data: unknown; meta?: unknown }, budget: number, next: (returned: number) => string): Capped {
  const whole = envelope as Record<string, unknown>;
  if (bytes(whole) <= budget) return { value: whole };
  if (!Array.isArray(envelope.data)) {
    const truncated: Truncation = { budget_bytes: budget, records_returned: 0, records_omitted: 1, next: next(0) };
    return { value: { ...whole, data: null, truncated }, truncated };
  }
  const records = envelope.data as unknown[];
  let used = bytes({ ...whole, data: [] }) + NOTICE_RESERVE;
  let kept = 0;
  for (const r of records) {
    const size = bytes(r) + 1;
    if (used + size > budget) break;
    used += size;
    kept++;
  }
  const cut = (n: number): Capped => {
    const truncated: Truncation = { budget_bytes: budget, records_returned: n, records_omitted: records.length - n, next: next(n) };
    return { value: { ...whole, data: records.slice(0, n), truncated }, truncated };
  };
  let result = cut(kept);
  // The reserve covers any usual notice; a longer one costs records, never the budget.
  while (kept > 0 && bytes(result.value) > budget) result = cut(--kept);
  return result;
}
