/**
 * Input hygiene of the HTTP layer, before anything reaches a handler or SQL:
 *
 * - NUL and other control characters in the body, query string or path are refused with 400
 *   invalid_characters, on every endpoint (PostgreSQL cannot store NUL in text and would answer
 *   500; SQLite would store it). Tab, LF and CR stay allowed inside JSON body strings (free text);
 *   in the query and path no control character is allowed.
 * - Errors Fastify answers before routing (malformed URL, over-long path parameter) and those
 *   Node's HTTP parser answers (431 header overflow, 408 request timeout, 400 unparsable) come
 *   back as problem+json with codes like every other failure.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import { problem, sendProblem, PROBLEM_CONTENT_TYPE } from './problem.ts';

// eslint-disable-next-line no-control-regex
const CONTROL_ANY = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_BODY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

function pointerEscape(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Paths (JSON pointers) of strings or keys in `value` containing a character of `re`; at most 20. */
export function findControlCharacters(value: unknown, re: RegExp, path = '', out: ErrorDetail[] = []): ErrorDetail[] {
  if (out.length >= 20) return out;
  if (typeof value === 'string') {
    if (re.test(value)) out.push({ path: path === '' ? '/' : path, message: 'contains a NUL or control character' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => findControlCharacters(v, re, `${path}/${i}`, out));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = `${path}/${pointerEscape(k)}`;
      if (re.test(k)) out.push({ path: p, message: 'the key contains a NUL or control character' });
      findControlCharacters(v, re, p, out);
    }
  }
  return out;
}

/** Whether any string or key in `value` contains a character of `re` (the common, clean case builds no paths). */
function hasControlCharacters(value: unknown, re: RegExp): boolean {
  if (typeof value === 'string') return re.test(value);
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const v of value) if (hasControlCharacters(v, re)) return true;
    return false;
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (re.test(k) || hasControlCharacters((value as Record<string, unknown>)[k], re)) return true;
  }
  return false;
}

/** preValidation hook (callback style: no promise on the path of every request): refuse control characters in body, query and path parameters. */
export function refuseControlCharacters(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (!hasControlCharacters(request.body, CONTROL_BODY) && !hasControlCharacters(request.query, CONTROL_ANY) && !hasControlCharacters(request.params, CONTROL_ANY)) {
    done();
    return;
  }
  const errors = [
    ...findControlCharacters(request.body, CONTROL_BODY),
    ...findControlCharacters(request.query, CONTROL_ANY).map((e) => ({ ...e, path: `query:${e.path.replace(/^\//, '')}` })),
    ...findControlCharacters(request.params, CONTROL_ANY).map((e) => ({ ...e, path: `path:${e.path.replace(/^\//, '')}` })),
  ];
  done(new SwitchboardError('invalid_characters', `The request contains NUL or control characters: ${errors.map((e) => e.path).join(', ')}`, { errors }));
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
