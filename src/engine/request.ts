/** Rendering an action's HTTP request: URL (path, query, or the next page's URL), headers, auth and body. */
import { SwitchboardError } from '../errors/index.ts';
import { formEncode } from '../http/form-body.ts';
import { renderTree, type CompiledAction, type LoadedManifest } from '../manifest/index.ts';
import { PathValueError, type TemplateContext } from '../templates/index.ts';
import type { Rendered } from './types.ts';

/** Where a runtime's requests go: its manifest, base URL and that URL's origin (egress stays on it). */
export interface RequestTarget {
  manifest: LoadedManifest;
  baseUrl: string;
  baseOrigin: string;
  /** The base URL was given explicitly (a sandbox, a simulator): it replaces the requests' own base URLs too. */
  explicit?: boolean;
}

const LINE_BREAK = /[\r\n]/;

/** Set a rendered request header (an empty value leaves it out); a line break in it is refused. */
export function setHeader(headers: Record<string, string>, name: string, value: unknown): void {
  if (value === undefined || value === null || value === '') return;
  const s = String(value);
  if (LINE_BREAK.test(s)) {
    throw new SwitchboardError('invalid_header_value', `The value of header ${name} contains a line break`, {
      errors: [{ path: `/headers/${name}`, message: 'contains CR or LF' }],
    });
  }
  headers[name.toLowerCase()] = s;
}

/**
 * A next-page link given relative to the vendor's own host (`/wiki/api/v2/pages?cursor=...`), followed
 * through a gateway whose base path holds that API path after a prefix of its own
 * (`https://api.atlassian.com/ex/confluence/<cloud id>/wiki/api/v2`): the prefix put before it.
 */
export function gatewayPath(link: string, baseUrl: string): string {
  if (!link.startsWith('/') || link.startsWith('//')) return link;
  const base = new URL(baseUrl).pathname.split('/').filter((s) => s !== '');
  const own = link
    .split(/[?#]/)[0]!
    .split('/')
    .filter((s) => s !== '');
  // The longest tail of the base path that the link's path starts with (wiki/api/v2).
  for (let start = 1; start < base.length; start++) {
    const tail = base.slice(start);
    if (tail.length <= own.length && tail.every((seg, i) => own[i] === seg)) return `/${base.slice(0, start).join('/')}${link}`;
  }
  return link;
}

/** The request of an action; `applyAuth` sets the auth header (and any credential query parameters on the URL). */
export function renderRequest(
  target: RequestTarget,
  a: CompiledAction,
  ctx: TemplateContext,
  absoluteUrl: string | undefined,
  applyAuth: (headers: Record<string, string>, url: URL) => void,
): { url: URL; init: Rendered['init'] } {
  // pagination.request: the next pages' own request, once the cursor param is given.
  const cursor = a.nextRequest === undefined ? undefined : (ctx['params'] as Record<string, unknown> | undefined)?.[a.nextRequest.param];
  const request = a.nextRequest !== undefined && cursor !== undefined && cursor !== null && cursor !== '' ? a.nextRequest.request : a.request;
  // request.base_url: a sibling API's own base URL, unless an explicit base URL replaces every one.
  if (request.baseUrl !== undefined && target.explicit !== true) target = { ...target, baseUrl: request.baseUrl, baseOrigin: new URL(request.baseUrl).origin };
  let url: URL;
  if (absoluteUrl !== undefined) {
    url = new URL(gatewayPath(absoluteUrl, target.baseUrl), target.baseUrl);
    // Never send credentials to a host the connector was not configured for.
    if (url.origin !== target.baseOrigin) {
      throw new SwitchboardError('upstream_protocol_error', `The upstream pointed the next page at another host (${url.origin})`);
    }
  } else {
    let path: string;
    try {
      path = request.path.renderPath(ctx);
    } catch (e) {
      if (e instanceof PathValueError) {
        throw new SwitchboardError('invalid_params', `Invalid params for ${a.entity}.${a.name}: ${e.message}`, {
          errors: [{ path: `/${e.variable.replace(/^params\./, '')}`, message: e.message }],
        });
      }
      throw e;
    }
    url = new URL(target.baseUrl + path);
    // Egress: a rendered path can never move the request to another host ("@evil", "//evil").
    if (url.origin !== target.baseOrigin) {
      throw new SwitchboardError('egress_refused', `The request of ${a.entity}.${a.name} does not stay on ${target.baseOrigin}`);
    }
    for (const [k, t] of request.query) {
      const v = t.render(ctx);
      if (v === undefined || v === null || v === '') continue;
      if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, String(item));
      else url.searchParams.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [k, t] of target.manifest.headers) setHeader(headers, k, t.render(ctx));
  for (const [k, t] of request.headers) setHeader(headers, k, t.render(ctx));
  applyAuth(headers, url);
  const init: Rendered['init'] = { method: request.method, headers };
  if (request.graphql !== undefined) {
    const query = request.graphql.query.render(ctx);
    const variables = request.graphql.variables ? renderTree(request.graphql.variables, ctx) : undefined;
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify({ query, ...(variables !== undefined ? { variables } : {}) });
  } else if (request.body !== undefined && request.bodyEncoding === 'form') {
    const body = renderTree(request.body, ctx) ?? {};
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new SwitchboardError(
        'invalid_params',
        `Invalid params for ${a.entity}.${a.name}: the form body must be an object, got ${Array.isArray(body) ? 'an array' : typeof body}`,
        {
          errors: [{ path: '/', message: 'the form body must render an object' }],
        },
      );
    }
    headers['content-type'] = 'application/x-www-form-urlencoded';
    init.body = formEncode(body as Record<string, unknown>);
  } else if (request.body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(renderTree(request.body, ctx) ?? {});
  }
  return { url, init };
}
