/**
 * Every failure on the wire is one RFC 9457 problem details object (application/problem+json)
 * with a stable `code` from the error registry and, for validation, `errors: [{path, message}]`.
 *
 * Paths in `errors`: a JSON Pointer into the request body (`/credentials/api_key`,
 * `/params/note_id`); query-string parameters as `query:<name>`, path parameters as
 * `path:<name>`, headers as `header:<name>`.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, SwitchboardError, type ErrorCode, type ErrorDetail } from '../../errors/index.ts';
import { airbyteProblem, speaksAirbyte } from './airbyte-envelope.ts';

/** The problem details media type (RFC 9457 §3). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The `type` URI of a code: a stable URN, since the codes' documentation ships with the code, not at a fixed host. */
export function problemType(code: string): string {
  return `urn:switchboard:problem:${code}`;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  errors?: ErrorDetail[];
  /** The request path the problem occurred on. */
  instance?: string;
  /** Machine-readable context: upstream status and body, valid choices, retry timing... */
  details?: Record<string, unknown>;
}

/** A problem for a registry code. */
export function problem(code: ErrorCode, detail?: string, extra: { errors?: ErrorDetail[]; details?: Record<string, unknown>; status?: number } = {}): Problem {
  const def = ERROR_CODES[code];
  return {
    type: problemType(code),
    title: def.title,
    status: extra.status ?? def.status,
    detail: detail ?? def.title,
    code,
    ...(extra.errors !== undefined && extra.errors.length > 0 ? { errors: extra.errors } : {}),
    ...(extra.details !== undefined && Object.keys(extra.details).length > 0 ? { details: extra.details } : {}),
  };
}

/** The problem of a SwitchboardError (engine, auth, manifest, service). */
export function problemFromSwitchboardError(e: SwitchboardError): Problem {
  return problem(e.code, e.message, { errors: e.errors, details: e.details, status: e.status });
}

const FASTIFY_PART_PREFIX: Record<string, string> = { body: '', querystring: 'query:', params: 'path:', headers: 'header:' };

/** Ajv errors (as Fastify reports them) → `{path, message}` located per the convention above. */
export function validationDetails(err: FastifyError): ErrorDetail[] {
  const part = err.validationContext ?? 'body';
  const prefix = FASTIFY_PART_PREFIX[part] ?? `${part}:`;
  return (err.validation ?? []).map((v) => {
    const params = v.params as Record<string, unknown>;
    let pointer = v.instancePath;
    let message = v.message ?? 'is invalid';
    if (v.keyword === 'required') {
      pointer = `${pointer}/${String(params['missingProperty'])}`;
      message = 'is required';
    } else if (v.keyword === 'additionalProperties') {
      pointer = `${pointer}/${String(params['additionalProperty'])}`;
      message = 'is not a known field';
    } else if (v.keyword === 'enum') {
      message = `must be one of: ${(params['allowedValues'] as unknown[]).join(', ')}`;
    }
    if (prefix === '') return { path: pointer === '' ? '/' : pointer, message };
    // Non-body parts are flat maps: `/limit` → `query:limit`.
    return { path: `${prefix}${pointer.replace(/^\//, '')}`, message };
  });
}

/** Map anything thrown while handling a request to a problem. */
export function toProblem(err: unknown): Problem {
  if (err instanceof SwitchboardError) return problemFromSwitchboardError(err);
  const fe = err as Partial<FastifyError> & { statusCode?: number };
  if (fe.validation !== undefined) {
    const errors = validationDetails(fe as FastifyError);
    return problem('invalid_request', `The request is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
  }
  switch (fe.code) {
    // PostgreSQL refusing a NUL (22P05) or invalid UTF-8 (22021): the hygiene hook stops these first; this is the backstop.
    case '22P05':
    case '22021':
      return problem('invalid_characters', 'The request contains characters the database cannot store');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return problem('unsupported_media_type', 'Send the request body as JSON with Content-Type: application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return problem('payload_too_large');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return problem(
        'malformed_json',
        fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'The body is empty but Content-Type says application/json' : 'The request body is not valid JSON',
      );
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return problem('invalid_request', 'Content-Length does not match the body');
    default:
      break;
  }
  // Fastify's other client errors (e.g. a malformed URL) keep their status.
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return problem('invalid_request', fe.message ?? 'Bad request', { status: fe.statusCode });
  }
  return problem('internal_error', 'Internal error');
}

/** Send a problem with its content type (and any extra headers). */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, p: Problem, headers: Record<string, string> = {}): FastifyReply {
  const body: Problem = { ...p, instance: request.url.split('?')[0] ?? request.url };
  for (const [k, v] of Object.entries(headers)) void reply.header(k, v);
  // Callers of Airbyte's agent SDK (opt-in) also get the fields it reads (airbyte-envelope.ts).
  return reply
    .code(p.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(speaksAirbyte(request) ? airbyteProblem(body) : body);
}
