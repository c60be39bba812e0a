/**
 * Request validation against the schemas of Intercom's OpenAPI description 2.14, extracted by
 * scripts/extract-intercom-openapi.ts into openapi-2.14.json next to this file (the simulator
 * never reads the upstream description at run time).
 *
 * A request the schemas reject gets the 400 error.list Intercom answers, with the error codes
 * its description's examples use: parameter_not_found for a missing parameter ("Name is a
 * required parameter."), bad_request for an unknown one ("bad 'test' parameter"), and
 * parameter_invalid for a value of the wrong type.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;

export interface OperationSchemas {
  operationId: string;
  path: Json;
  query: Json;
  body: Json | null;
  response: Json | null;
}

export interface OpenApiExtract {
  source: string;
  intercom_versions: string[];
  servers: { url: string; description?: string }[];
  operations: Record<string, OperationSchemas>;
}

export const OPENAPI: OpenApiExtract = JSON.parse(readFileSync(new URL('./openapi-2.14.json', import.meta.url), 'utf8')) as OpenApiExtract;

/** One rejected parameter, as an Intercom error-list entry. */
export interface ParamError {
  code: 'parameter_not_found' | 'parameter_invalid' | 'bad_request';
  message: string;
  field?: string;
}

// Bodies are JSON: types must match exactly. Query strings and path segments are text, so they
// are coerced ("5" is the integer 5, "true" the boolean) before the schema applies.
const bodyAjv = new Ajv({ strict: false, allErrors: false });
const textAjv = new Ajv({ strict: false, allErrors: false, coerceTypes: true });

interface Compiled {
  path: ValidateFunction;
  query: ValidateFunction;
  body: ValidateFunction | null;
}
const compiled = new Map<string, Compiled>();

function operation(key: string): Compiled {
  let c = compiled.get(key);
  if (c === undefined) {
    const op = OPENAPI.operations[key];
    if (op === undefined) throw new Error(`no OpenAPI schemas for ${key}`);
    c = {
      path: textAjv.compile(op.path),
      query: textAjv.compile(op.query),
      body: op.body === null ? null : bodyAjv.compile(op.body),
    };
    compiled.set(key, c);
  }
  return c;
}

/** `/companies/0/name` → `companies[0].name`, the way Intercom names nested fields. */
function fieldName(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter((p) => p !== '');
  if (extra !== undefined) parts.push(extra);
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

function toParamError(e: ErrorObject): ParamError {
  switch (e.keyword) {
    case 'required': {
      const field = fieldName(e.instancePath, (e.params as { missingProperty: string }).missingProperty);
      return { code: 'parameter_not_found', message: `${field} is a required parameter.`, field };
    }
    case 'additionalProperties': {
      const field = fieldName(e.instancePath, (e.params as { additionalProperty: string }).additionalProperty);
      return { code: 'bad_request', message: `bad '${field}' parameter`, field };
    }
    default: {
      const field = fieldName(e.instancePath);
      return field === ''
        ? { code: 'parameter_invalid', message: `Request ${e.message ?? 'is invalid'}` }
        : { code: 'parameter_invalid', message: `${field} ${e.message ?? 'is invalid'}`, field };
    }
  }
}

/**
 * anyOf failures report every branch's complaint; the first `required` one names what is
 * missing best (e.g. POST /contacts without email, external_id or role).
 */
function firstError(errors: ErrorObject[] | null | undefined): ParamError {
  const list = errors ?? [];
  const branch = list.find((e) => e.keyword === 'required') ?? list.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf') ?? list[0];
  return branch === undefined ? { code: 'parameter_invalid', message: 'invalid parameters' } : toParamError(branch);
}

/** Validate path params (coerced in place); false means no such resource can exist. */
export function validPath(key: string, params: Record<string, string>): boolean {
  return operation(key).path({ ...params });
}

/** Validate and coerce query params; returns the coerced values or the first error. */
export function validateQuery(key: string, query: URLSearchParams): { ok: true; value: Json } | { ok: false; error: ParamError } {
  const value: Json = {};
  for (const [k, v] of query) value[k] = v;
  const validate = operation(key).query;
  if (validate(value)) return { ok: true, value };
  return { ok: false, error: firstError(validate.errors) };
}

/** Validate a parsed JSON body; null when it is acceptable. */
export function validateBody(key: string, body: unknown): ParamError | null {
  const validate = operation(key).body;
  if (validate === null || validate(body)) return null;
  return firstError(validate.errors);
}

/** Whether an operation takes a request body. */
export function hasBody(key: string): boolean {
  return operation(key).body !== null;
}
