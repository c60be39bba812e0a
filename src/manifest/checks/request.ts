/**
 * Requests: an action's request, the credential check's and a minted_bearer variant's mint
 * request: path, query, headers, body (JSON or form) or GraphQL, each template checked against
 * its scope.
 */
import type { CredentialCheck, Request } from '../../../generated/manifest.ts';
import { compileTemplate, type Template } from '../../templates/index.ts';
import type { CompiledAction, CompiledCheck, CompiledRequest } from '../compile.ts';
import { REQUEST_ROOTS, type Checker, type Scope } from './checker.ts';
import { ajv } from './json-schema.ts';

/** Compile a request declaration (an action's, or the check's); undefined when its path does not compile. */
export function compileRequest(check: Checker, at: (string | number)[], r: Request, reqScope: Scope): CompiledRequest | undefined {
  const path = check.template([...at, 'path'], r.path, reqScope, { pathParams: true });
  if (!r.path.startsWith('/')) check.add([...at, 'path'], 'the path must start with "/"');
  const query: [string, Template][] = [];
  for (const [k, src] of Object.entries(r.query ?? {})) {
    const t = src === undefined ? undefined : check.template([...at, 'query', k], src, reqScope);
    if (t) query.push([k, t]);
  }
  const reqHeaders: [string, Template][] = [];
  for (const [k, src] of Object.entries(r.headers ?? {})) {
    const t = src === undefined ? undefined : check.template([...at, 'headers', k], src, reqScope);
    if (t) reqHeaders.push([k, t]);
  }
  const body = r.body !== undefined ? check.tree([...at, 'body'], r.body, reqScope) : undefined;
  if (r.body_encoding === 'form') {
    if (r.body === undefined) check.add([...at, 'body_encoding'], 'body_encoding: form needs a body (an object whose keys are the form fields)');
    else if (body !== undefined && body.kind !== 'object' && body.kind !== 'template')
      check.add([...at, 'body'], 'a form body must be an object (its keys are the form fields), or one template that renders one');
    if (r.graphql !== undefined) check.add([...at, 'body_encoding'], 'GraphQL requests are sent as JSON; remove body_encoding');
    if (r.method === 'GET' || r.method === 'DELETE')
      check.add([...at, 'body_encoding'], `a ${r.method} request carries no body; send these values as query params`);
  }
  let graphql: CompiledRequest['graphql'];
  if (r.graphql !== undefined) {
    if (r.body !== undefined) check.add(at, 'use either body or graphql, not both');
    if (r.method !== 'POST') check.add([...at, 'method'], 'GraphQL requests are sent with POST');
    const q = check.template([...at, 'graphql', 'query'], r.graphql.query, reqScope);
    const vars = r.graphql.variables !== undefined ? check.tree([...at, 'graphql', 'variables'], r.graphql.variables, reqScope) : undefined;
    if (q) graphql = { query: q, ...(vars ? { variables: vars } : {}) };
  }
  if (path === undefined) return undefined;
  return {
    method: r.method,
    path,
    query,
    headers: reqHeaders,
    ...(body ? { body } : {}),
    bodyEncoding: r.body_encoding ?? 'json',
    ...(graphql ? { graphql } : {}),
    ...(r.base_url !== undefined ? { baseUrl: r.base_url.replace(/\/+$/, '') } : {}),
  };
}

/** The credential check: its request as a params-less get-shaped action whose record is the whole body. */
export function compileCheck(
  check: Checker,
  c: CredentialCheck,
  at: (string | number)[],
  credentials: ReadonlySet<string>,
  config: ReadonlySet<string>,
  pathCredentials?: Scope['pathCredentials'],
  roots: ReadonlySet<string> = REQUEST_ROOTS,
): CompiledCheck | undefined {
  const request = compileRequest(check, [...at, 'request'], c.request, {
    roots,
    params: {},
    credentials,
    config,
    ...(pathCredentials !== undefined ? { pathCredentials } : {}),
  });
  const resScope: Scope = { roots: new Set(['body', 'headers', 'status']), config };
  const success = c.success !== undefined ? check.template([...at, 'success'], c.success, resScope) : undefined;
  const info: [string, Template][] = [];
  for (const [k, src] of Object.entries(c.info ?? {})) {
    const t = src === undefined ? undefined : check.template([...at, 'info', k], src, resScope);
    if (t) info.push([k, t]);
  }
  const record = compileTemplate('{{body}}');
  if (request === undefined) return undefined;
  const action: CompiledAction = {
    entity: 'check',
    name: 'get',
    def: { request: c.request, response: { record: '{{body}}' } },
    validateParams: ajv.compile({ type: 'object' }),
    requiresAny: [],
    request,
    record,
    meta: [],
    map: [],
    retrySafe: true,
  };
  return { action, ...(success ? { success } : {}), info };
}
