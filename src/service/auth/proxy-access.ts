/**
 * Who may use the pass-through proxy: a per-application switch (applications.proxy_access),
 * 'on' (default), 'read' (GET and HEAD only) or 'off'. Scoped tokens are kept to their
 * customer's connectors by the scope hook (customers.ts) like every route with a connector_id.
 *
 * checkProxyAccess is the one place the decision is made, so a wider permission model (per
 * application and scoped token allow-lists) can take it over by changing this function only.
 */
import { READ_METHODS } from '../../engine/proxy-request.ts';
import { SwitchboardError } from '../../errors/index.ts';
import type { ServiceStore } from '../../store/index.ts';
import type { Principal } from './authentication.ts';

export const PROXY_ACCESS = ['on', 'read', 'off'] as const;
export type ProxyAccess = (typeof PROXY_ACCESS)[number];

/** Refuse a proxy call the principal's application may not make: proxy_disabled (off) or proxy_method_forbidden (read and a writing method). */
export function checkProxyAccess(principal: Pick<Principal, 'proxyAccess'>, method: string, connector: { id: string; connector_type: string }): void {
  const access = principal.proxyAccess;
  if (access === 'off') {
    throw new SwitchboardError('proxy_disabled', 'The proxy is switched off for this application', { details: { connector_id: connector.id } });
  }
  if (access === 'read' && !READ_METHODS.has(method.toUpperCase())) {
    throw new SwitchboardError('proxy_method_forbidden', `Not sent: this application may use the proxy for GET and HEAD only, not ${method.toUpperCase()}`, {
      details: { connector_id: connector.id, allowed_methods: [...READ_METHODS] },
    });
  }
}

/** Set the proxy access of the application with `clientId` (admin CLI); invalid_client when there is none. */
export async function setProxyAccess(store: ServiceStore, clientId: string, access: string): Promise<{ client_id: string; proxy_access: ProxyAccess }> {
  if (!(PROXY_ACCESS as readonly string[]).includes(access)) {
    throw new SwitchboardError('invalid_request', `proxy access must be one of: ${PROXY_ACCESS.join(', ')}`, {
      errors: [{ path: '/proxy_access', message: `must be one of: ${PROXY_ACCESS.join(', ')}` }],
    });
  }
  if (!(await store.setApplicationProxyAccess(clientId, access))) throw new SwitchboardError('invalid_client', `No application with client id ${clientId}`);
  return { client_id: clientId, proxy_access: access as ProxyAccess };
}
