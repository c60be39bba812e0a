/**
 * Service-side OAuth (spec: "Bring your own OAuth flow"):
 *
 *   initiate ─► consent_url (provider authorize URL with our callback and a state)
 *   provider ─► GET callback?code&state ─► exchange code ─► follow_up requests ─► pending secret ─► redirect_url?secret_id
 *   create connector (variant B) with server_side_oauth_secret_id
 *
 * The state is 256 random bits stored as sha256, bound to the organization, application,
 * customer, connector type and redirect_url, valid once for 10 minutes. The pending secret is
 * the same kind of value, valid once for 15 minutes and only for the organization (and
 * customer and type) that started the flow; its tokens are sealed at rest like connector
 * credentials. Both are consumed by a conditional UPDATE, so of two instances (or two browser
 * tabs) presenting one state or secret, exactly one succeeds.
 *
 * Pre-consent fields: an OAuth variant whose URLs name the account (Zendesk's
 * https://{{credentials.subdomain}}.zendesk.com/oauth/tokens) cannot start without that value.
 * initiate takes the variant's non-secret fields used by its authorize/token URL or base URL as
 * `credentials`, checks each against its pattern before anything is stored or sent, keeps them
 * in the state row (server side; only the consent URL's host shows them to the vendor), and the
 * callback exchanges the code at the URL they fill and stores them with the tokens.
 */
import { authorizeUrl, exchangeAuthorizationCode, oauthUrl, pkceVerifier, runFollowUps, type Credentials } from '../../auth/index.ts';
import { SwitchboardError } from '../../errors/index.ts';
import type { LoadedManifest, OAuth2Auth } from '../../manifest/index.ts';
import type { OAuthAppConfig } from '../config.ts';
import { connectorType, nowIso, type ServiceContext } from '../context.ts';
import { validateCredentials } from './runtime-pool.ts';
import { PREFIX, randomSecret, sha256Hex } from '../auth/secrets.ts';
import { OAUTH_CALLBACK_PATH } from '../http/schemas.ts';

export { OAUTH_CALLBACK_PATH } from '../http/schemas.ts';

/** AAD binding a pending secret's sealed tokens to its row. */
export function oauthSecretContext(idHash: string): string {
  return `oauth_secret:${idHash}`;
}

/** The callback URL registered with providers. */
export function callbackUrl(ctx: Pick<ServiceContext, 'publicUrl'>): string {
  return ctx.publicUrl() + OAUTH_CALLBACK_PATH;
}

interface DeploymentOAuth {
  manifest: LoadedManifest;
  variant: OAuth2Auth;
  app: OAuthAppConfig;
}

/** The type's OAuth variant and this deployment's OAuth app for it, or the problem saying which is missing. */
export function deploymentOAuth(ctx: ServiceContext, type: string): DeploymentOAuth {
  const manifest = connectorType(ctx, type);
  const variant = manifest.manifest.auth.find((v): v is OAuth2Auth => v.type === 'oauth2');
  if (variant === undefined) {
    throw new SwitchboardError('oauth_not_supported', `${type} has no OAuth credential variant; create its connectors with credentials`, {
      errors: [{ path: '/connector_type', message: 'has no OAuth credential variant' }],
    });
  }
  const app = ctx.config.connectorTypes[type]?.oauth;
  if (app === undefined) {
    const p = `SWITCHBOARD_${type.toUpperCase()}_`;
    throw new SwitchboardError('oauth_not_configured', `This deployment has no OAuth app for ${type}: set ${p}OAUTH_CLIENT_ID and ${p}OAUTH_CLIENT_SECRET`);
  }
  return { manifest, variant, app };
}

export interface InitiateBody {
  customer_name: string;
  connector_type: string;
  redirect_url: string;
  /** The variant's pre-consent fields (preConsentFields), e.g. {subdomain: "acme"}. */
  credentials?: Record<string, unknown>;
}

const VARIABLE = /\{\{\s*credentials\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/**
 * The credential fields of an OAuth variant asked for before consent: its non-secret fields that
 * its authorize_url, token_url or base URL (the variant's own, else the manifest's default and
 * regions) name as {{credentials.<field>}}, less those its follow_up requests or token_fields fill
 * after the code exchange. Zendesk's oauth variant: [subdomain]; Jira's: none (cloud_id comes from a follow_up).
 */
export function preConsentFields(manifest: LoadedManifest, variant: OAuth2Auth): string[] {
  const urls = [
    variant.authorize_url,
    variant.token_url,
    ...(variant.base_url !== undefined ? [variant.base_url] : [manifest.manifest.base_url.default, ...Object.values(manifest.manifest.base_url.regions ?? {})]),
  ];
  const names = new Set<string>();
  for (const url of urls) for (const m of (url ?? '').matchAll(VARIABLE)) names.add(m[1] as string);
  const filledLater = new Set([
    ...(variant.follow_up ?? []).flatMap((f) => Object.keys(f.fields)),
    ...Object.keys(variant.token_fields ?? {}),
    ...Object.keys(variant.callback_fields ?? {}),
  ]);
  return [...names].filter((n) => variant.fields[n] !== undefined && variant.fields[n]?.secret !== true && !filledLater.has(n));
}

/**
 * The pre-consent credentials of an initiate request, checked: only the variant's pre-consent
 * fields, each present when required, a string matching its pattern and one URL-safe token
 * (oauthUrl's rule). Anything else is invalid_oauth_credentials naming the field.
 */
export function preConsentCredentials(manifest: LoadedManifest, variant: OAuth2Auth, given: Record<string, unknown> = {}): Credentials {
  const fields = preConsentFields(manifest, variant);
  const errors: { path: string; message: string }[] = [];
  const out: Credentials = {};
  for (const k of Object.keys(given)) {
    if (!fields.includes(k))
      errors.push({
        path: `/credentials/${k}`,
        message:
          fields.length === 0 ? `${manifest.type} asks for no credential before OAuth consent` : `is not asked for before consent (only ${fields.join(', ')})`,
      });
  }
  for (const name of fields) {
    const f = variant.fields[name];
    const v = given[name];
    if (v === undefined || v === '') {
      if (f?.required !== false)
        errors.push({ path: `/credentials/${name}`, message: `is required${f?.description !== undefined ? ` (${f.description})` : ''}` });
      continue;
    }
    try {
      if (typeof v !== 'string') throw new Error('not a string');
      oauthUrl(variant, `{{credentials.${name}}}`, { [name]: v });
      out[name] = v;
    } catch {
      errors.push({
        path: `/credentials/${name}`,
        message:
          f?.enum !== undefined
            ? `must be one of ${f.enum.join(', ')}`
            : `must be a string matching ${f?.pattern !== undefined ? `^(?:${f.pattern})$` : 'one host label or path segment'}`,
      });
    }
  }
  if (errors.length > 0) {
    throw new SwitchboardError(
      'invalid_oauth_credentials',
      `${manifest.type}: ${errors.map((e) => `credentials.${e.path.slice('/credentials/'.length)} ${e.message}`).join('; ')}`,
      { errors },
    );
  }
  return out;
}

/** The key of a flow's PKCE code verifier among the fields kept with its state (no credential field's name: they start with a letter). */
const PKCE_VERIFIER = '$pkce_verifier';

/** Start a flow: store the state and return the provider's consent URL. */
export async function initiateOAuth(
  ctx: ServiceContext,
  principal: { applicationId: string; organizationId: string },
  body: InitiateBody,
): Promise<{ consent_url: string; expires_at: string }> {
  let redirect: URL;
  try {
    redirect = new URL(body.redirect_url);
  } catch {
    redirect = new URL('invalid:');
  }
  if (redirect.protocol !== 'https:' && redirect.protocol !== 'http:') {
    throw new SwitchboardError('invalid_request', 'redirect_url must be an absolute http(s) URL', {
      errors: [{ path: '/redirect_url', message: 'must be an absolute http(s) URL' }],
    });
  }
  const { manifest, variant, app } = deploymentOAuth(ctx, body.connector_type);
  const pre = preConsentCredentials(manifest, variant, body.credentials);
  const state = randomSecret();
  // PKCE: the flow's code verifier is kept with its state (beside the pre-consent fields) for the code exchange.
  const verifier = variant.pkce !== undefined ? pkceVerifier() : undefined;
  const kept: Record<string, unknown> = verifier !== undefined ? { ...pre, [PKCE_VERIFIER]: verifier } : pre;
  const now = nowIso(ctx);
  const expiresAt = nowIso(ctx, ctx.config.oauthStateTtlSeconds);
  await ctx.store.deleteExpiredOAuth(nowIso(ctx, -86_400));
  await ctx.store.insertOAuthState({
    state_hash: sha256Hex(state),
    organization_id: principal.organizationId,
    application_id: principal.applicationId,
    customer_name: body.customer_name,
    connector_type: body.connector_type,
    redirect_url: body.redirect_url,
    credentials: Object.keys(kept).length > 0 ? JSON.stringify(kept) : null,
    expires_at: expiresAt,
    used_at: null,
    created_at: now,
  });
  const consent = authorizeUrl(variant, {
    clientId: app.clientId,
    redirectUri: callbackUrl(ctx),
    state,
    credentials: pre,
    ...(verifier !== undefined ? { codeVerifier: verifier } : {}),
    ...(app.authorizeUrl !== undefined ? { authorizeUrl: app.authorizeUrl } : {}),
  });
  return { consent_url: consent, expires_at: expiresAt };
}

export interface CallbackQuery {
  state?: string;
  code?: string;
  error?: string;
  error_description?: string;
  /** Other parameters of the provider's redirect, which a variant's callback_fields may name (realmId). */
  [param: string]: string | undefined;
}

function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

/**
 * Finish a flow: consume the state, exchange the code, keep the tokens as a pending secret and
 * return where to redirect the user (redirect_url with ?secret_id=..., or ?error=... when the
 * provider refused or the exchange failed). An unknown, expired or reused state throws
 * invalid_oauth_state: there is no trustworthy redirect_url to send the user to.
 */
export async function completeOAuth(
  ctx: ServiceContext,
  q: CallbackQuery,
): Promise<{
  location: string;
  connectorType: string;
  outcome: 'secret' | 'error';
  error?: string;
  flow: { organizationId: string; applicationId: string; customerName: string };
}> {
  if (q.state === undefined || q.state === '') throw new SwitchboardError('invalid_oauth_state', 'The callback has no state parameter');
  const now = nowIso(ctx);
  const st = await ctx.store.consumeOAuthState(sha256Hex(q.state), now);
  if (st === undefined) throw new SwitchboardError('invalid_oauth_state', 'The OAuth state is unknown, expired or already used; start the flow again');
  const flow = { organizationId: st.organization_id, applicationId: st.application_id, customerName: st.customer_name };
  const fail = (error: string, description: string): { location: string; connectorType: string; outcome: 'error'; error: string; flow: typeof flow } => ({
    location: withParams(st.redirect_url, { error, error_description: description.slice(0, 300) }),
    connectorType: st.connector_type,
    outcome: 'error',
    error,
    flow,
  });
  // The provider's own refusal (RFC 6749 §4.1.2.1), e.g. access_denied, is passed on as is.
  if (q.error !== undefined && q.error !== '') return fail(q.error, q.error_description ?? 'The provider did not grant access');
  if (q.code === undefined || q.code === '') return fail('invalid_request', 'The provider sent neither a code nor an error');

  let d: DeploymentOAuth;
  try {
    d = deploymentOAuth(ctx, st.connector_type);
  } catch (e) {
    return fail('server_error', (e as Error).message);
  }
  // The pre-consent fields the flow started with (initiate checked them): the token URL's
  // variables, and part of the stored credentials (the connector's base URL and refreshes use them).
  const { [PKCE_VERIFIER]: verifier, ...pre } = st.credentials !== null ? (JSON.parse(st.credentials) as Credentials) : {};
  let credentials: Credentials;
  try {
    const tokens = await exchangeAuthorizationCode(
      d.variant,
      { clientId: d.app.clientId, clientSecret: d.app.clientSecret, ...(d.app.tokenUrl !== undefined ? { tokenUrl: d.app.tokenUrl } : {}) },
      q.code,
      callbackUrl(ctx),
      ctx.fetch,
      undefined,
      pre,
      typeof verifier === 'string' ? verifier : undefined,
    );
    credentials = { ...pre, ...credentialsFromTokens(d.variant, d.app, tokens) };
  } catch (e) {
    ctx.log.warn({ connector_type: st.connector_type, err_code: (e as SwitchboardError).code }, 'OAuth code exchange failed');
    return fail('token_exchange_failed', 'The provider did not exchange the authorization code for tokens');
  }
  // callback_fields: values the provider's redirect carried beside the code (the company the consent chose).
  for (const [field, param] of Object.entries(d.variant.callback_fields ?? {}) as [string, string][]) {
    const value = q[param];
    if (value === undefined || value === '') return fail('oauth_nothing_granted', `The provider's redirect carried no ${param}`);
    credentials[field] = value;
  }
  // The variant's follow_up requests fill the fields the token answer lacks (Jira: cloud_id).
  // A failure stores nothing: the redirect carries its code (oauth_nothing_granted when the
  // user granted nothing the connector can use) and message, which never hold a token.
  const compiled = d.manifest.auth.find((v) => v.def.name === d.variant.name);
  if (compiled?.followUps !== undefined) {
    try {
      credentials = await runFollowUps(compiled, credentials, { after: 'exchange', fetchImpl: ctx.fetch, baseUrl: d.app.followUpBaseUrl });
    } catch (e) {
      const err = e instanceof SwitchboardError ? e : new SwitchboardError('internal_error', 'The OAuth follow-up requests failed', { cause: e });
      ctx.log.warn({ connector_type: st.connector_type, err_code: err.code }, 'OAuth follow-up request failed');
      return fail(err.code, err.message);
    }
  }
  let variantName: string;
  try {
    variantName = validateCredentials(d.manifest, credentials, d.variant.name);
  } catch {
    return fail('token_exchange_failed', `The provider's tokens do not fit the ${d.variant.name} credential variant of ${st.connector_type}`);
  }
  const secretId = randomSecret(PREFIX.oauthSecret);
  const idHash = sha256Hex(secretId);
  const sealed = ctx.keyRing.sealJson(credentials, oauthSecretContext(idHash));
  await ctx.store.insertOAuthSecret({
    id_hash: idHash,
    organization_id: st.organization_id,
    customer_name: st.customer_name,
    connector_type: st.connector_type,
    auth_variant: variantName,
    key_id: sealed.keyId,
    ciphertext: sealed.ciphertext,
    expires_at: nowIso(ctx, ctx.config.oauthSecretTtlSeconds),
    used_at: null,
    created_at: now,
  });
  return { location: withParams(st.redirect_url, { secret_id: secretId }), connectorType: st.connector_type, outcome: 'secret', flow };
}

/**
 * Credentials of the OAuth variant from a token answer: the token fields the variant declares,
 * plus the deployment app's client_id/client_secret when the variant has those fields (Monday's
 * OAuth variant is access_token + client_id + client_secret in the spec).
 */
export function credentialsFromTokens(variant: OAuth2Auth, app: OAuthAppConfig, tokens: Record<string, unknown>): Credentials {
  const fields = Object.keys(variant.fields);
  const out: Credentials = {};
  for (const f of fields) if (tokens[f] !== undefined) out[f] = tokens[f];
  if (fields.includes('client_id')) out['client_id'] = app.clientId;
  if (fields.includes('client_secret')) out['client_secret'] = app.clientSecret;
  return out;
}
