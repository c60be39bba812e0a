/**
 * `serve --sandbox`: a ready Connect UI link for a demo customer, so a new user can click through
 * the page at once. Only the link is handed out: the application the session needs stays the
 * service's own (a newcomer following the quick start creates one application, not two); to call
 * the API on what the page connects, `switchboard admin create-app --org sandbox` gives one.
 */
import { createApplication } from '../auth/accounts.ts';
import type { ServiceContext } from '../context.ts';
import { createConnectSession } from './connect-sessions.ts';

export const SANDBOX_ORGANIZATION = 'sandbox';
export const SANDBOX_CUSTOMER = 'demo-customer';

export interface SandboxConnectLink {
  connect_url: string;
  expires_at: string;
  organization: string;
  customer_name: string;
}

/** A new application of the sandbox organization and a connect session for the demo customer (every type). */
export async function sandboxConnectLink(ctx: ServiceContext): Promise<SandboxConnectLink> {
  const app = await createApplication(ctx.store, { orgName: SANDBOX_ORGANIZATION, appName: 'sandbox demo' });
  const row = await ctx.store.findApplicationByClientId(app.client_id);
  if (row === undefined) throw new Error('the sandbox application vanished');
  const session = await createConnectSession(ctx, { applicationId: row.id, organizationId: app.organization_id }, { customer_name: SANDBOX_CUSTOMER });
  return { connect_url: session.url, expires_at: session.expires_at, organization: SANDBOX_ORGANIZATION, customer_name: SANDBOX_CUSTOMER };
}
