/**
 * Input hygiene of the HTTP layer, before anything reaches a handler or SQL:
 *
 * - JSON bodies are checked once, in the JSON content-type parser, by one bounded iterative walk
 *   (no recursion: a 20,000-deep body cannot overflow the stack): nesting deeper than
 *   MAX_JSON_DEPTH is 400 invalid_json_depth; a lone surrogate (\ud800–\udfff without its pair,
 *   which no UTF-8 database stores as sent) or a NUL or other control character in any string or
 *   key is 400 invalid_characters. Tab, LF and CR stay allowed inside body strings (free text).
 * - The query string and path parameters are checked in a preValidation hook: no control
 *   character and no lone surrogate. (Headers arrive as latin1, so they cannot carry a surrogate;
 *   Node's parser refuses CR, LF and NUL in them.) PostgreSQL cannot store NUL in text and would
 *   answer 500; SQLite would store it.
 * - Errors Fastify answers before routing (malformed URL, over-long path parameter) and those
 *   Node's HTTP parser answers (431 header overflow, 408 request timeout, 400 unparsable) come
 *   back as problem+json with codes like every other failure.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SwitchboardError, type ErrorDetail } from '../../errors/index.ts';
import { problem, sendProblem, PROBLEM_CONTENT_TYPE } from './problem.ts';

/** Deepest nesting of objects and arrays a request body may have (the root object is level 1). */
export const MAX_JSON_DEPTH = 64;

// eslint-disable-next-line no-control-regex
const CONTROL_ANY = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BODY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

const MAX_REPORTED = 20;

function pointerEscape(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Why a string or key is refused, or undefined when it is fine. */
function badText(s: string, control: RegExp): string | undefined {
  if (!s.isWellFormed()) return 'contains a lone surrogate (\\ud800-\\udfff without its pair): not valid Unicode';
  if (control.test(s)) return 'contains a NUL or control character';
  return undefined;
}

/** The common, clean case: is anything wrong in `root`? Iterative; builds no paths. */
function firstProblem(root: unknown, control: RegExp, maxDepth: number): 'depth' | 'characters' | undefined {
  if (typeof root === 'string') return badText(root, control) === undefined ? undefined : 'characters';
  if (root === null || typeof root !== 'object') return undefined;
  const values: unknown[] = [root];
  const depths: number[] = [1];
  let characters = false;
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > maxDepth) return 'depth';
    if (Array.isArray(v)) {
      for (const x of v) {
        if (typeof x === 'string') {
          if (!characters && badText(x, control) !== undefined) characters = true;
        } else if (x !== null && typeof x === 'object') {
          values.push(x);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      if (!characters && badText(k, control) !== undefined) characters = true;
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === 'string') {
        if (!characters && badText(x, control) !== undefined) characters = true;
      } else if (x !== null && typeof x === 'object') {
        values.push(x);
        depths.push(depth + 1);
      }
    }
  }
  return characters ? 'characters' : undefined;
}

/**
 * Paths (JSON pointers) of strings or keys in `root` that are refused, with why; at most 20.
 * Iterative and bounded by `maxDepth` (deeper levels are not visited).
 */
export function findBadCharacters(root: unknown, control: RegExp, maxDepth = MAX_JSON_DEPTH): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }];
  while (stack.length > 0 && out.length < MAX_REPORTED) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === 'string') {
      const why = badText(value, control);
      if (why !== undefined) out.push({ path: path === '' ? '/' : path, message: why });
      continue;
    }
    if (value === null || typeof value !== 'object' || depth >= maxDepth) continue;
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    // Pushed in reverse, so paths are reported in document order.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i] as readonly [string, unknown];
      stack.push({ value: v, path: `${path}/${pointerEscape(k)}`, depth: depth + 1 });
    }
    if (!Array.isArray(value)) {
      for (const k of Object.keys(value)) {
        const why = badText(k, control);
        if (why !== undefined && out.length < MAX_REPORTED) out.push({ path: `${path}/${pointerEscape(k)}`, message: `the key ${why}` });
      }
    }
  }
  return out;
}

function charactersError(errors: ErrorDetail[]): SwitchboardError {
  return new SwitchboardError('invalid_characters', `The request contains NUL or control characters, or invalid Unicode (a lone surrogate): ${errors.map((e) => e.path).join(', ')}`, { errors });
}

/**
 * The one check of a parsed request body (JSON, or the Connect UI's form fields): undefined when
 * it is fine, else the 400 to answer (invalid_json_depth before invalid_characters).
 */
export function checkBody(value: unknown): SwitchboardError | undefined {
  const found = firstProblem(value, CONTROL_BODY, MAX_JSON_DEPTH);
  if (found === undefined) return undefined;
  if (found === 'depth') {
    return new SwitchboardError('invalid_json_depth', `The request body is nested more than ${MAX_JSON_DEPTH} levels deep`, { details: { max_depth: MAX_JSON_DEPTH } });
  }
  return charactersError(findBadCharacters(value, CONTROL_BODY));
}

type ParserDone = (err: Error | null, body?: unknown) => void;
type JsonParser = (request: FastifyRequest, body: string, done: ParserDone) => void;

/**
 * The service's application/json parser: Fastify's own (empty and malformed bodies, prototype
 * poisoning refused as before), then checkBody — so depth and characters are checked once,
 * before hooks, schemas and handlers see the body.
 */
export function checkedJsonParser(parse: JsonParser): JsonParser {
  return function parseChecked(request, body, done) {
    parse(request, body, (err, value) => {
      if (err !== null) return done(err);
      const refused = checkBody(value);
      if (refused !== undefined) done(refused);
      else done(null, value);
    });
  };
}

/** Whether any value of a flat map (query string, path parameters) is refused. */
function flatMapBad(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (badText(k, CONTROL_ANY) !== undefined) return true;
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'string' && badText(v, CONTROL_ANY) !== undefined) return true;
    if (Array.isArray(v) && v.some((x) => typeof x === 'string' && badText(x, CONTROL_ANY) !== undefined)) return true;
  }
  return false;
}

/** preValidation hook (callback style: no promise on the path of every request): refuse control characters and lone surrogates in the query string and path parameters. */
export function refuseControlCharacters(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (!flatMapBad(request.query) && !flatMapBad(request.params)) {
    done();
    return;
  }
  const errors = [
    ...findBadCharacters(request.query, CONTROL_ANY, 2).map((e) => ({ ...e, path: `query:${e.path.replace(/^\//, '')}` })),
    ...findBadCharacters(request.params, CONTROL_ANY, 2).map((e) => ({ ...e, path: `path:${e.path.replace(/^\//, '')}` })),
  ];
  done(charactersError(errors));
}

/** Fastify's frameworkErrors: a malformed URL (400 invalid_url) or a path parameter longer than maxParamLength (414 uri_too_long). */
export function frameworkErrors(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    void sendProblem(request, reply, problem('uri_too_long', 'A path segment is longer than the service accepts'));
    return;
  }
  void sendProblem(request, reply, problem('invalid_url', 'The request URL is malformed (e.g. a bad percent-encoding)'));
}

/** http.Server 'clientError' handler: the parser's refusals as problem+json. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  let p;
  if (err.code === 'HPE_HEADER_OVERFLOW') p = problem('headers_too_large', 'The request headers (or the URL) are larger than the service accepts');
  else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') p = problem('request_timeout', 'The request was not received in time');
  else if (err.code === 'HPE_URI_TOO_LONG') p = problem('uri_too_long');
  else p = problem('invalid_request', 'The request is not valid HTTP');
  const body = JSON.stringify(p);
  socket.end(
    `HTTP/1.1 ${p.status} ${STATUS_CODES[p.status] ?? 'Error'}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
