/**
 * Input hygiene of the HTTP layer, before anything reaches a handler or SQL:
 *
 * - JSON bodies are checked once, in the JSON content-type parser, by checkBody
 *   (src/errors/body-check.ts, shared with inbound webhooks): nesting deeper than MAX_JSON_DEPTH
 *   is 400 invalid_json_depth; a lone surrogate or a NUL or other control character in any
 *   string or key is 400 invalid_characters.
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
import { badText, CONTROL_ANY, charactersError, checkBody, findBadCharacters } from '../../errors/body-check.ts';
import { problem, sendProblem, PROBLEM_CONTENT_TYPE } from './problem.ts';

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
