/**
 * The OpenAPI front end's error answers, in the vendor's shape: the sidecar's error body (a
 * template), else a sample of the description's error schema with message and code filled in; the
 * sidecar's codes, statuses and messages per path id, parameter and operation.
 */
import { randomUUID } from 'node:crypto';
import { render } from '../core/templates.ts';
import type { Operation, RequestProblem } from '../description.ts';
import type { ErrorOverride } from '../sidecar.ts';
import type { SimResponse } from '../sim-server.ts';
import { fillError } from './schema.ts';
import type { OpenApiContext } from './types.ts';

export interface ErrorAnswers {
  errorResponse(problem: RequestProblem, op?: Operation, headers?: Record<string, string>): SimResponse;
  notFound(op: Operation, id: string, param?: string): SimResponse;
}

export function errorAnswers(ctx: OpenApiContext): ErrorAnswers {
  const { sidecar, sample, anyErrorRef } = ctx;
  const errorResponse = (problem: RequestProblem, op?: Operation, headers: Record<string, string> = {}): SimResponse => {
    let p = problem;
    // A path id the description's types rule out names no record: the sidecar's 404 for it.
    if (p.status === 400 && sidecar.not_found !== undefined && op?.params.some((x) => x.in === 'path' && x.name === p.field))
      p = { ...p, status: 404, code: 'not_found' };
    let override: ErrorOverride | undefined;
    // The sidecar's 404s: for a path id (p.field) or a path no operation matches (no op); a
    // handler's own 404 without a field keeps its code and message.
    if (p.status === 404 && p.code === 'not_found' && (p.field !== undefined || op === undefined))
      override = sidecar.not_found?.[p.field ?? ''] ?? sidecar.not_found?.default;
    else if (p.status === 400) override = (op === undefined ? undefined : sidecar.operations?.[op.key]?.bad_request) ?? sidecar.parameters?.[p.field ?? ''];
    if (override !== undefined) p = { ...p, message: override.message };
    // The sidecar's 401 message, but not for an expired token (its message tells how long ago).
    else if (p.status === 401 && p.code !== 'expired_token' && sidecar.auth?.message !== undefined) p = { ...p, message: sidecar.auth.message };
    const codes = sidecar.error?.codes;
    // A refused token is invalid_token, named like unauthorized unless the sidecar tells them apart.
    const code = override?.code ?? codes?.[p.code] ?? (p.code === 'invalid_token' ? (codes?.unauthorized ?? 'unauthorized') : p.code);
    // Vendors that answer a code with another status (one vendor: 422 for bad bodies; another: 200 with
    // ok: false for every error, its `default`, but 429).
    const statuses = sidecar.error?.status;
    const status = statuses?.[p.code] ?? (p.code === 'invalid_token' ? statuses?.unauthorized : undefined) ?? statuses?.default;
    if (status !== undefined) p = { ...p, status };
    let json: unknown;
    // retry_after: a rate limit's wait in seconds (its Retry-After), a number in the body; '' (left out) otherwise.
    const wait = Number(headers?.['Retry-After']);
    const vars = { status: p.status, code, message: p.message, field: p.field ?? '', request_id: randomUUID(), retry_after: Number.isFinite(wait) ? wait : '' };
    // body: null answers no body (a vendor that gives the reason in a header only).
    if (sidecar.error?.body === null) json = undefined;
    else if (sidecar.error?.body !== undefined) json = render(sidecar.error.body, vars);
    else {
      const ref = op?.errorRef ?? anyErrorRef;
      json = ref === undefined ? { error: { code, message: p.message } } : fillError(sample(ref), p, code);
    }
    const own = Object.fromEntries(Object.entries(sidecar.error?.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(render(v, vars))]));
    return { status: p.status, headers: { ...own, ...headers }, json };
  };
  const notFound = (op: Operation, id: string, param?: string): SimResponse =>
    errorResponse({ status: 404, code: 'not_found', message: `No record with id ${id}`, ...(param !== undefined ? { field: param } : {}) }, op);
  return { errorResponse, notFound };
}
