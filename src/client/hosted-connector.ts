/**
 * One connector of the hosted client (hosted.ts's `connector(idOrType)`): its id, looked up by
 * type for the client's customer when not given, and its execute, search, changes and proxy.
 */
import { SwitchboardError } from '../errors/index.ts';
import type { ChangesResponse, HostedConnector, HostedProxyRequest, HostedProxyResponse } from './hosted-types.ts';
import { problemError, unwrap, type HostedSession } from './hosted-session.ts';
import type { ConnectorType } from './library.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A page of the customer's connectors of one type (the client's connectors.list). */
type ListByType = (query: { connector_type: string; limit: number }) => Promise<{ data: { id: string }[] }>;

/** The connector's id: given, or the one connector of that type the customer has (looked up once, again after a failure). */
function connectorId(session: HostedSession, idOrType: string, list: ListByType): () => Promise<string> {
  const customer = session.options.customerName;
  let resolved: Promise<string> | undefined = UUID.test(idOrType) ? Promise.resolve(idOrType) : undefined;
  return () => {
    resolved ??= (async () => {
      const page = await list({ connector_type: idOrType, limit: 2 });
      if (page.data.length === 0) {
        throw new SwitchboardError('connector_not_found', `Customer "${customer}" has no ${idOrType} connector; create one first`);
      }
      if (page.data.length > 1) {
        throw new SwitchboardError('invalid_request', `Customer "${customer}" has several ${idOrType} connectors; pass a connector id instead`, {
          details: { connector_ids: page.data.map((c) => c.id) },
        });
      }
      return page.data[0]!.id;
    })().catch((e: unknown) => {
      resolved = undefined;
      throw e;
    });
    return resolved;
  };
}

/** A proxy call: the vendor's answer whatever its status; the service's own refusals as SwitchboardErrors; one token renewal after our 401. */
async function proxyCall(session: HostedSession, connectorIdNow: string, r: HostedProxyRequest): Promise<HostedProxyResponse> {
  const query =
    typeof r.query === 'string'
      ? r.query.replace(/^\?/, '')
      : new URLSearchParams(Object.entries(r.query ?? {}).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const url = `${session.baseUrl}/api/v1/integrations/connectors/${encodeURIComponent(connectorIdNow)}/proxy/${r.path.replace(/^\//, '')}${query !== '' ? `${r.path.includes('?') ? '&' : '?'}${query}` : ''}`;
  const json = r.body !== undefined && typeof r.body !== 'string' && !(r.body instanceof Uint8Array);
  const body = json ? JSON.stringify(r.body) : (r.body as string | Uint8Array | undefined);
  for (let renewed = false; ; renewed = true) {
    const headers = new Headers(r.headers);
    if (json && !headers.has('content-type')) headers.set('content-type', 'application/json');
    await session.authorize(headers);
    const res = await session.baseFetch(url, { method: r.method, headers, ...(body !== undefined ? { body } : {}) });
    const ours = res.headers.get('switchboard-proxy-source') !== 'upstream';
    if (ours && res.status === 401 && !renewed) {
      session.forgetToken();
      continue;
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (ours && res.status >= 400) {
      let problem: unknown;
      try {
        problem = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        problem = undefined;
      }
      throw problemError(res.status, problem);
    }
    return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: bytes };
  }
}

/** This customer's connector by id, or by type (exactly one of that type must exist). */
export function hostedConnector<T extends ConnectorType>(session: HostedSession, idOrType: T | (string & {}), list: ListByType): HostedConnector<T> {
  const { api } = session;
  const id = connectorId(session, idOrType, list);
  const run = async (entity: string, action: string, params: unknown): Promise<unknown> =>
    unwrap(
      api.POST('/api/v1/integrations/connectors/{connector_id}/execute', {
        params: { path: { connector_id: await id() } },
        body: { entity, action, ...(params !== undefined ? { params } : {}) } as never,
      }),
    );
  return {
    id,
    proxy: async (r) => proxyCall(session, await id(), r),
    execute: (entity, action, ...params) => run(entity, action, params[0]) as never,
    search: (entity, params) => run(entity, 'search', params) as never,
    changes: async (entity, query = {}) =>
      unwrap(
        api.GET('/api/v1/integrations/connectors/{connector_id}/records', {
          params: {
            path: { connector_id: await id() },
            query: {
              entity,
              ...(query.modified_after != null ? { modified_after: query.modified_after } : {}),
              ...(query.limit !== undefined ? { limit: query.limit } : {}),
            },
          },
        }),
      ) as Promise<ChangesResponse>,
  };
}
