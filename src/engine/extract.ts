/** Response extraction: a list's records and meta, or one record, with response.map applied. */
import { SwitchboardError } from '../errors/index.ts';
import type { CompiledAction, LoadedManifest } from '../manifest/index.ts';
import { truthy } from '../templates/index.ts';
import { snippet } from './response.ts';
import type { RawResult } from './types.ts';

export function extractList(
  manifest: LoadedManifest,
  a: CompiledAction,
  raw: RawResult,
): { records: Record<string, unknown>[]; meta: Record<string, unknown> } {
  if (raw.nothing === true) return { records: [], meta: Object.fromEntries(a.meta.map(([k]) => [k, null])) };
  const records = a.records?.render(raw.ctx);
  if (!Array.isArray(records)) {
    throw protocolError(manifest, a, raw, `expected a list of records at ${a.records?.source ?? 'records'}`);
  }
  if (a.map.length > 0) for (let i = 0; i < records.length; i++) records[i] = mapRecord(a, records[i] as Record<string, unknown>, raw);
  const meta: Record<string, unknown> = {};
  for (const [k, t] of a.meta) {
    const v = t.render(raw.ctx);
    meta[k] = v === undefined || v === '' ? null : v;
  }
  return { records: records as Record<string, unknown>[], meta };
}

export function extractRecord(manifest: LoadedManifest, a: CompiledAction, raw: RawResult): Record<string, unknown> {
  if (raw.nothing === true || (a.notFoundWhen !== undefined && truthy(a.notFoundWhen.render(raw.ctx)))) {
    throw new SwitchboardError('upstream_not_found', `${manifest.type} has no such ${a.entity} record`, { details: { upstream_status: raw.status } });
  }
  const rec = a.record?.render(raw.ctx);
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
    throw protocolError(manifest, a, raw, `expected a record at ${a.record?.source ?? 'record'}`);
  }
  return a.map.length > 0 ? mapRecord(a, rec as Record<string, unknown>, raw) : (rec as Record<string, unknown>);
}

/**
 * Apply response.map to one record: each listed field is rewritten from the record. In place:
 * the record was parsed from this response and is ours (copying a large record cost more than
 * the mapping); every template still sees the record as it came, since all are evaluated first.
 */
function mapRecord(a: CompiledAction, record: Record<string, unknown>, raw: RawResult): Record<string, unknown> {
  if (record === null || typeof record !== 'object') return record;
  const ctx = { record, params: raw.ctx['params'] };
  const map = a.map;
  const values = map.map(([, t]) => t.render(ctx));
  // A field mapped to the record itself gets the record as it came, not a circular one.
  const out = values.includes(record) ? { ...record } : record;
  for (let i = 0; i < map.length; i++) out[map[i]![0]] = values[i] === undefined ? null : values[i];
  return out;
}

function protocolError(manifest: LoadedManifest, a: CompiledAction, raw: RawResult, why: string): SwitchboardError {
  return new SwitchboardError('upstream_protocol_error', `${manifest.type} answered ${a.entity}.${a.name} with a body Switchboard cannot read: ${why}`, {
    details: { upstream_status: raw.status, upstream_body: typeof raw.body === 'string' ? snippet(raw.body) : raw.body },
  });
}
