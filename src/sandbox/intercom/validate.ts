/**
 * Request checks against Intercom's vendored 2.14 description (connectors/intercom/openapi-2.14.json),
 * by operation ("POST /contacts/search"), for tests that check what a connector sent.
 */
import type { RequestProblem } from '../../simulator/description.ts';
import { INTERCOM_DESCRIPTION } from './index.ts';

function operation(key: string) {
  const op = INTERCOM_DESCRIPTION.operations.find((o) => o.key === key);
  if (op === undefined) throw new Error(`no operation ${key} in Intercom's description`);
  return op;
}

/** Validate and coerce query params; the coerced values or the first problem. */
export function validateQuery(key: string, query: URLSearchParams): { ok: true; value: Record<string, unknown> } | { ok: false; error: RequestProblem } {
  const op = operation(key);
  const pathParams = Object.fromEntries(op.pathParams.map((p) => [p, '1']));
  const r = INTERCOM_DESCRIPTION.checkRequest({ ...op, bodyRef: undefined }, { pathParams, query, headers: {}, rawBody: '' }, { skipAuth: true });
  return 'status' in r ? { ok: false, error: r } : { ok: true, value: r.query };
}

/** Validate a parsed JSON body; null when it is acceptable. */
export function validateBody(key: string, body: unknown): RequestProblem | null {
  const op = operation(key);
  return op.bodyRef === undefined ? null : INTERCOM_DESCRIPTION.validateValue(op.bodyRef, body);
}
