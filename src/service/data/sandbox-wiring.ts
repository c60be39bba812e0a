/**
 * Point a service configuration at the sandbox simulators (`switchboard serve --sandbox`):
 * every simulated connector type gets the simulator as its upstream base URL and, when the
 * simulator offers OAuth, the simulator's OAuth app as the deployment's app for that type.
 */
import type { LoadedManifest, OAuth2Auth } from '../../manifest/index.ts';
import type { Sandbox } from '../../simulator/sandbox.ts';
import type { OAuthAppConfig, ServiceConfig } from '../config.ts';

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The OAuth app a simulator exposes, read from `oauth: {clientId, clientSecret, authorizeUrl?,
 * tokenUrl?}` or flat `oauthClientId` / `oauthClientSecret`. A simulator answers every host of
 * its API on one port, so the authorize and token URLs default to the simulator's base URL
 * with the paths of the manifest's authorize_url and token_url (Intercom: /oauth and
 * /auth/eagle/token; Monday: /oauth2/authorize and /oauth2/token), and the variant's follow_up
 * requests go there too (Jira: /oauth/token/accessible-resources).
 */
export function simulatorOAuthApp(sim: Record<string, unknown>, baseUrl: string, manifest: LoadedManifest | undefined): OAuthAppConfig | undefined {
  const nested = sim['oauth'] !== null && typeof sim['oauth'] === 'object' ? (sim['oauth'] as Record<string, unknown>) : {};
  const clientId = str(nested['clientId']) ?? str(sim['oauthClientId']);
  const clientSecret = str(nested['clientSecret']) ?? str(sim['oauthClientSecret']);
  const variant = manifest?.manifest.auth.find((v): v is OAuth2Auth => v.type === 'oauth2');
  if (clientId === undefined || clientSecret === undefined || variant === undefined) return undefined;
  const onSimulator = (url: string): string => {
    // Only the path and query count (the host may be a variable: https://{{credentials.subdomain}}.zendesk.com).
    const u = new URL(url.replace(/\{\{[^}]*\}\}/g, 'x'));
    return `${baseUrl}${u.pathname}${u.search}`;
  };
  return {
    clientId,
    clientSecret,
    authorizeUrl: str(nested['authorizeUrl']) ?? onSimulator(variant.authorize_url),
    tokenUrl: str(nested['tokenUrl']) ?? onSimulator(variant.token_url),
    // The variant's follow_up requests (Jira's accessible-resources) go to the simulator too.
    ...(variant.follow_up !== undefined ? { followUpBaseUrl: baseUrl } : {}),
  };
}

/** A copy of `config` with every sandbox type's base URL (and OAuth app, when offered) set. */
export function withSandbox(config: ServiceConfig, sandbox: Pick<Sandbox, 'connectors' | 'simulators'>, registry: Map<string, LoadedManifest>): ServiceConfig {
  const connectorTypes = { ...config.connectorTypes };
  for (const [type, c] of Object.entries(sandbox.connectors)) {
    const sim = sandbox.simulators[type];
    const oauth = sim !== undefined ? simulatorOAuthApp(sim, c.base_url, registry.get(type)) : undefined;
    connectorTypes[type] = { ...(connectorTypes[type] ?? {}), baseUrl: c.base_url, ...(oauth !== undefined ? { oauth } : {}) };
  }
  return { ...config, connectorTypes };
}
