/**
 * Organizations, applications and access tokens.
 *
 * Access tokens are opaque random values (`sbt_` + 256 bits) stored as sha256 with an expiry,
 * rather than signed JWTs: a token can be revoked by deleting its row, instances share no
 * signing key (only the database they already share), and the indexed lookup is cheap (and
 * reused for at most lookupCacheMs, see lookup-cache.ts). Expiry is checked on every request.
 */
import { SwitchboardError } from '../../errors/index.ts';
import type { ServiceStore } from '../../store/index.ts';
import { newId, PREFIX, randomSecret, sameDigest, sha256Hex } from './secrets.ts';

export interface CreatedApplication {
  organization_id: string;
  client_id: string;
  /** Shown once; only its hash is stored. */
  client_secret: string;
}

/** How an application's execute answers and errors are shaped (src/service/http/airbyte-envelope.ts). */
export const RESPONSE_ENVELOPES = ['switchboard', 'airbyte'] as const;
export type ResponseEnvelope = (typeof RESPONSE_ENVELOPES)[number];

/** Create an application for organization `orgName` (created when missing). */
export async function createApplication(
  store: ServiceStore,
  o: { orgName: string; appName?: string; now?: Date; envelope?: ResponseEnvelope },
): Promise<CreatedApplication> {
  const now = (o.now ?? new Date()).toISOString();
  return store.transaction(async (tx) => {
    const { organization } = await tx.ensureOrganization(o.orgName, newId(), now);
    const clientId = PREFIX.clientId + randomSecret().slice(0, 24);
    const clientSecret = randomSecret(PREFIX.clientSecret);
    const appId = newId();
    await tx.insertApplication({
      id: appId,
      client_id: clientId,
      client_secret_hash: sha256Hex(clientSecret),
      name: o.appName ?? `${o.orgName} application`,
      created_at: now,
      ...(o.envelope !== undefined ? { response_envelope: o.envelope } : {}),
    });
    await tx.grant(appId, organization.id, now);
    return { organization_id: organization.id, client_id: clientId, client_secret: clientSecret };
  });
}

/** Give the application with `clientId` access to organization `orgName` (created when missing). */
export async function grantOrganization(
  store: ServiceStore,
  o: { clientId: string; orgName: string; now?: Date },
): Promise<{ client_id: string; organization_id: string; granted: boolean }> {
  const now = (o.now ?? new Date()).toISOString();
  return store.transaction(async (tx) => {
    const app = await tx.findApplicationByClientId(o.clientId);
    if (app === undefined) throw new SwitchboardError('invalid_client', `No application with client id ${o.clientId}`);
    const { organization } = await tx.ensureOrganization(o.orgName, newId(), now);
    const granted = await tx.grant(app.id, organization.id, now);
    return { client_id: o.clientId, organization_id: organization.id, granted };
  });
}

export interface IssuedToken {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/** Exchange client credentials for an access token, or invalid_client (same answer for an unknown id and a wrong secret). */
export async function issueAccessToken(
  store: ServiceStore,
  o: { clientId: string; clientSecret: string; ttlSeconds: number; now: number },
): Promise<IssuedToken> {
  const app = await store.findApplicationByClientId(o.clientId);
  // Hash even when the app is unknown so both failures take the same time.
  const presented = sha256Hex(o.clientSecret);
  if (app === undefined || !sameDigest(presented, app.client_secret_hash)) {
    throw new SwitchboardError('invalid_client', 'Unknown client_id or wrong client_secret');
  }
  const token = randomSecret(PREFIX.accessToken);
  const nowIso = new Date(o.now).toISOString();
  await store.deleteExpiredTokens(app.id, nowIso);
  await store.insertAccessToken(sha256Hex(token), app.id, new Date(o.now + o.ttlSeconds * 1000).toISOString(), nowIso);
  return { access_token: token, token_type: 'Bearer', expires_in: o.ttlSeconds };
}

/** Longest life of a scoped token: short-lived by design (and never longer than the service's token TTL). */
export const SCOPED_TOKEN_MAX_TTL_SECONDS = 900;

/**
 * A token limited to one customer of one organization, issued to a caller holding an access
 * token of the application: it acts for that organization only, and every endpoint refuses
 * other customers' connectors (src/service/connectors/customers.ts).
 */
export async function issueScopedToken(
  store: ServiceStore,
  o: { applicationId: string; organizationId: string; customerName: string; ttlSeconds: number; now: number },
): Promise<IssuedToken> {
  const token = randomSecret(PREFIX.accessToken);
  const ttl = Math.min(o.ttlSeconds, SCOPED_TOKEN_MAX_TTL_SECONDS);
  const nowIso = new Date(o.now).toISOString();
  await store.deleteExpiredTokens(o.applicationId, nowIso);
  await store.insertAccessToken(sha256Hex(token), o.applicationId, new Date(o.now + ttl * 1000).toISOString(), nowIso, {
    organizationId: o.organizationId,
    customerName: o.customerName,
  });
  return { access_token: token, token_type: 'Bearer', expires_in: ttl };
}
