/**
 * {GET,HEAD,POST,PUT,PATCH,DELETE} /api/v1/integrations/connectors/{connector_id}/proxy/{path}:
 * the pass-through proxy (docs/proxy.md). `{path}` and the query string are taken from the raw
 * request URL, as the caller encoded them (no decoding that could hide `%2F` or `%2e%2e`), and
 * checked by the engine before anything is sent. The body is taken as raw bytes of any content
 * type, within the service's body limit.
 *
 * Every answer carries `Switchboard-Proxy-Source`: `upstream` when it is the vendor's own answer
 * (status, body and the headers a client needs, passed back unchanged), `switchboard` when it is
 * Switchboard's problem+json (unknown connector, refused path, throttle, timeout...).
 */
import { withSpan } from '../../observe/hooks.ts';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PROXY_METHODS } from '../../engine/proxy-request.ts';
import { isSwitchboardError, SwitchboardError } from '../../errors/index.ts';
import type { CallOptions } from '../../engine/index.ts';
import type { ProxyRequest, ProxyResponse } from '../../engine/proxy-request.ts';
import { principalOf, type Principal } from '../auth/authentication.ts';
import { connectorType, type ServiceContext } from '../context.ts';
import { executeFailure } from '../../engine/secret-scrub.ts';
import { authorizeAccess } from '../auth/permissions.ts';
import { checkProxyAccess } from '../auth/proxy-access.ts';
import { ProxyParamsSchema } from '../http/schemas.ts';
import { disconnectSignal } from './execute-routes.ts';
import { noteAuthFailure } from '../connectors/connectors.ts';
import { refreshRefusal } from '../connectors/refresh-coordinator.ts';
import { isAuthFailure } from '../../sync/index.ts';
import type { ConnectorRow } from '../../store/index.ts';

const ROUTE_PREFIX = '/api/v1/integrations/connectors/';
export const PROXY_PATH = `${ROUTE_PREFIX}:connector_id/proxy/*`;
/** The response header telling the vendor's answers from Switchboard's own. */
export const PROXY_SOURCE_HEADER = 'switchboard-proxy-source';

/** The path after `/proxy/` and the query string, as the caller wrote them. */
function rawTarget(request: FastifyRequest): { path: string; query: string } {
  const url = request.raw.url ?? '';
  const q = url.indexOf('?');
  const pathPart = q === -1 ? url : url.slice(0, q);
  // "<connector id as sent>/proxy/<path>" after the fixed prefix the route matched.
  const afterPrefix = pathPart.slice(ROUTE_PREFIX.length);
  const rest = afterPrefix.slice(afterPrefix.indexOf('/') + 1);
  return { path: rest.slice('proxy/'.length), query: q === -1 ? '' : url.slice(q + 1) };
}

/** One proxy call on a stored connector for a principal (the route and the hosted MCP tool): access checked, errors scrubbed of credentials. */
export async function proxyConnector(
  ctx: ServiceContext,
  principal: Pick<Principal, 'organizationId' | 'proxyAccess' | 'permissions'>,
  id: string,
  request: ProxyRequest,
  options: CallOptions,
): Promise<ProxyResponse> {
  const row = ctx.runtimes.cachedRow(principal.organizationId, id) ?? (await ctx.runtimes.row(principal.organizationId, id));
  if (row === undefined) throw new SwitchboardError('connector_not_found', `No connector ${id} in this organization`, { details: { connector_id: id } });
  checkProxyAccess(principal, request.method, row);
  authorizeAccess(principal, { connectorType: row.connector_type, method: request.method });
  // Its token endpoint refused the refresh: no upstream call until the credentials are replaced (as for execute).
  const refused = refreshRefusal(row);
  if (refused !== undefined) throw refused;
  const { runtime, secrets } = ctx.runtimes.get(row, connectorType(ctx, row.connector_type));
  let answer: ProxyResponse;
  try {
    // A span per proxy call when traced (docs/operations.md); the method only, never the path's ids or the query.
    answer = await withSpan('switchboard proxy', { 'http.request.method': request.method, 'switchboard.connector_type': row.connector_type }, () =>
      runtime.proxy(request, options),
    );
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    // Upstream details are passed through, but never anything that contains a credential.
    const clean = executeFailure(e, secrets);
    // A refused OAuth refresh (oauth_refresh_failed) during the call: auth_failed, as for execute.
    if (isAuthFailure(clean)) await authFailed(ctx, row, clean);
    throw clean;
  }
  // The vendor's 401 (after the one refresh an OAuth connector gets) is handed back as sent, and
  // marks the connector auth_failed as an execute's would. A 403 does not: through the proxy it
  // usually means one endpoint or resource the account may not use, not refused credentials.
  if (answer.status === 401) {
    await authFailed(
      ctx,
      row,
      new SwitchboardError('upstream_credentials_rejected', `${row.connector_type} answered a proxy call with HTTP 401`, { details: { upstream_status: 401 } }),
    );
  }
  return answer;
}

async function authFailed(ctx: ServiceContext, row: ConnectorRow, error: SwitchboardError): Promise<void> {
  // Refused credentials may have been replaced elsewhere meanwhile: read the row again next time.
  ctx.runtimes.forget(row.id);
  await noteAuthFailure(ctx, row, error);
}

async function proxyCall(ctx: ServiceContext, request: FastifyRequest<{ Params: { connector_id: string } }>, reply: FastifyReply): Promise<unknown> {
  const principal = principalOf(request);
  const id = request.params.connector_id;
  const target = rawTarget(request);
  const started = performance.now();
  const body = request.body;
  try {
    const answer = await proxyConnector(
      ctx,
      principal,
      id,
      {
        method: request.method,
        // The text after "/proxy/" with its leading slash back: "proxy//host" is then the scheme-relative path it is.
        path: `/${target.path}`,
        query: target.query,
        // The request's own Authorization, Host, forwarding headers... are dropped, not refused: they are the caller's to us.
        headers: request.headers as Record<string, string | undefined> as Record<string, string>,
        body: Buffer.isBuffer(body) && body.length > 0 ? body : undefined,
        maxResponseBytes: ctx.config.proxyMaxResponseBytes,
        dropUnlistedHeaders: true,
        // A 2xx body is streamed through, not read whole (docs/proxy.md).
        stream: true,
      },
      { signal: disconnectSignal(request), maxThrottleWaitMs: ctx.config.upstreamMaxWaitMs },
    );
    const stream = answer.stream;
    if (stream !== undefined) {
      // Listening at once: an error the stream emits before Fastify pipes it must not go unheard.
      stream.once('error', (e: Error) => {
        if (!reply.raw.headersSent) return;
        request.log.warn(
          { connector_id: id, method: request.method, path: target.path, status: answer.status, code: isSwitchboardError(e) ? e.code : e.name },
          'proxy answer cut short',
        );
      });
      // Nothing is sent before the first bytes: a body that fails first (too large, timed out) is our own problem+json.
      await firstBytes(stream).catch((e: unknown) => {
        throw streamFailure(e);
      });
    }
    request.log.info(
      { connector_id: id, method: request.method, path: target.path, status: answer.status, duration_ms: Math.round(performance.now() - started) },
      'proxy call',
    );
    reply.header(PROXY_SOURCE_HEADER, 'upstream');
    for (const [k, v] of Object.entries(answer.headers)) reply.header(k, v);
    reply.code(answer.status);
    // Past the first bytes a failure can only cut the answer short: the connection is closed (Fastify destroys it).
    return request.method === 'HEAD' ? reply.send() : reply.send(stream ?? answer.body);
  } catch (e) {
    request.log.info(
      {
        connector_id: id,
        method: request.method,
        path: target.path,
        code: isSwitchboardError(e) ? e.code : 'internal_error',
        duration_ms: Math.round(performance.now() - started),
      },
      'proxy call refused',
    );
    throw e;
  }
}

/** A streamed body's failure as our error: the cap's and the budget's as they are, a timeout or a broken connection as upstream_unavailable. */
function streamFailure(e: unknown): unknown {
  if (isSwitchboardError(e) || !(e instanceof Error)) return e;
  const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError';
  return new SwitchboardError(
    'upstream_unavailable',
    timedOut ? 'The vendor did not send its answer within the time limit' : `The vendor's answer broke off: ${e.message}`,
    { details: { timeout: timedOut }, cause: e },
  );
}

/** Wait until a streamed body has its first bytes (or has ended); its error, if it fails first. */
function firstBytes(stream: Readable): Promise<void> {
  if (stream.readableLength > 0 || stream.readableEnded) return Promise.resolve();
  if (stream.errored !== null) return Promise.reject(stream.errored);
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      off();
      resolve();
    };
    const fail = (e: Error): void => {
      off();
      reject(e);
    };
    const off = (): void => {
      stream.off('readable', done);
      stream.off('end', done);
      stream.off('error', fail);
    };
    stream.on('readable', done);
    stream.on('end', done);
    stream.on('error', fail);
  });
}

export function proxyRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    // Any content type, as bytes: the body is the vendor's business (the body limit still holds).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    // Our own answers (problem+json) are told apart from the vendor's.
    app.addHook('onSend', async (_request, reply, payload) => {
      if (!reply.hasHeader(PROXY_SOURCE_HEADER)) reply.header(PROXY_SOURCE_HEADER, 'switchboard');
      return payload;
    });
    app.route<{ Params: { connector_id: string } }>({
      method: [...PROXY_METHODS],
      url: PROXY_PATH,
      exposeHeadRoute: false,
      schema: { params: ProxyParamsSchema },
      handler: (request, reply) => proxyCall(ctx, request, reply),
    });
  };
}
