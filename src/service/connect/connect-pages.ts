/**
 * The Connect UI's pages, one function per page (its route and handler); what they share is in
 * connect-page-kit.ts. Registered by connect-routes.ts inside the pages' own plugin.
 */
import type { FastifyInstance, FastifyRequest, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { Credentials } from '../../auth/index.ts';
import { isSwitchboardError, SwitchboardError } from '../../errors/index.ts';
import type { OAuth2Auth } from '../../manifest/index.ts';
import type { ConnectorRow } from '../../store/index.ts';
import { createConnector, patchConnector } from '../connectors/connectors.ts';
import { connectorType, nowIso, type ServiceContext } from '../context.ts';
import { deploymentOAuth, initiateOAuth, oauthSecretContext, preConsentFields } from '../connectors/oauth-flow.ts';
import { problem, sendProblem } from '../http/problem.ts';
import { connectorCredentialsContext, validateCredentials } from '../connectors/runtime-pool.ts';
import { sha256Hex } from '../auth/secrets.ts';
import type { ConnectTables } from './connect-migrations.ts';
import { bootstrapPage, homePage, successPage, type HomeType } from './connect-html.ts';
import { ConnectExchangeRequestSchema } from './connect-schemas.ts';
import {
  allowedTypes,
  CONNECT_COOKIE,
  CONNECT_PAGE_PATH,
  exchangeToken,
  httpOrigin,
  SESSION_END_TEXT,
  sessionFromCookie,
  type ConnectSessionRow,
} from './connect-sessions.ts';
import {
  CONNECT_DONE_PATH,
  CONNECT_EXCHANGE_PATH,
  CONNECT_OAUTH_RETURN_PATH,
  CONNECT_TYPE_PATH,
  cookieOf,
  humanize,
  withParams,
  type ConnectPageKit,
  type FormBody,
} from './connect-page-kit.ts';

const pub = { config: { auth: 'public' as const } };

/** The success page of a finished connection, for the browser whose session made it (any reload included). */
export function donePage(app: FastifyInstance, kit: ConnectPageKit): void {
  const { ctx } = kit;
  app.get<{ Querystring: Record<string, string | undefined> }>(CONNECT_DONE_PATH, pub, async (request, reply) => {
    const cookie = cookieOf(request);
    const s =
      cookie === undefined || cookie === ''
        ? undefined
        : await (ctx.database.db as unknown as Kysely<ConnectTables>)
            .selectFrom('connect_sessions')
            .selectAll()
            .where('browser_hash', '=', sha256Hex(cookie))
            .executeTakeFirst();
    if (s === undefined) return kit.ended(reply, 'invalid');
    const row = await ctx.store.getConnector(s.organization_id, request.query['connector_id'] ?? '').catch(() => undefined);
    if (s.allowed_origin !== null) kit.frameOrigin.set(reply, s.allowed_origin);
    if (row === undefined || row.customer_name !== s.customer_name || !allowedTypes(s).includes(row.connector_type)) return kit.notOffered(reply);
    const redirect = s.redirect_url !== null ? withParams(s.redirect_url, { connector_id: row.id, connector_type: row.connector_type }) : undefined;
    return kit.html(
      reply,
      200,
      successPage({
        title: connectorType(ctx, row.connector_type).manifest.title,
        type: row.connector_type,
        connectorId: row.id,
        reconnected: request.query['reconnected'] === '1',
        redirect,
        // A widget session tells its origin only.
        messageOrigin: s.allowed_origin ?? (s.redirect_url !== null ? new URL(s.redirect_url).origin : '*'),
        brand: kit.brand,
      }),
    );
  });
}

/** The home page: the types the session offers, with the customer's connectors of each. */
export function homePageRoute(app: FastifyInstance, kit: ConnectPageKit): void {
  const { ctx } = kit;
  app.get(CONNECT_PAGE_PATH, pub, async (request, reply) => {
    const cookie = cookieOf(request);
    const r = await sessionFromCookie(ctx, cookie);
    if (r.session === undefined) {
      // No session yet: the script exchanges the fragment token (or says the link is incomplete).
      // A widget link's ?origin= may frame this first page, which holds nothing; the pages after it keep to the session's origin.
      const asked = (request.query as Record<string, unknown> | undefined)?.['origin'];
      const origin = typeof asked === 'string' ? httpOrigin(asked) : undefined;
      if (origin !== undefined && r.end === 'invalid') kit.frameOrigin.set(reply, origin);
      return r.end === 'invalid' ? kit.html(reply, 200, bootstrapPage(kit.brand)) : kit.ended(reply, r.end);
    }
    const s = r.session;
    if (s.allowed_origin !== null) kit.frameOrigin.set(reply, s.allowed_origin);
    const rows = await ctx.store.listConnectors(s.organization_id, { customerName: s.customer_name, limit: 500 });
    const types: HomeType[] = allowedTypes(s).flatMap((type) => {
      const m = ctx.registry.get(type);
      if (m === undefined) return [];
      return [
        {
          type,
          title: m.manifest.title,
          description: m.manifest.description,
          logo: m.manifest.logo,
          // The status as the connector health check keeps it (active, auth_failed, error).
          connectors: rows.filter((c) => c.connector_type === type).map((c) => ({ id: c.id, name: c.name, status: c.status, created_at: c.created_at })),
        },
      ];
    });
    return kit.html(reply, 200, homePage(types, kit.brand));
  });
}

// JSON only: an HTML form from another site (no CORS preflight needed) must not plant its session here (login CSRF).
function jsonOnly(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  done(type === 'application/json' ? undefined : new SwitchboardError('unsupported_media_type', 'Send the token as JSON with Content-Type: application/json'));
}

/** The exchange of the link's fragment token for the session cookie (the bootstrap page's script). */
export function exchangeRoute(app: FastifyInstance, kit: ConnectPageKit): void {
  const { ctx } = kit;
  app.post<{ Body: { token: string } }>(
    CONNECT_EXCHANGE_PATH,
    { ...pub, preValidation: jsonOnly, schema: { body: ConnectExchangeRequestSchema } },
    async (request, reply) => {
      const r = await exchangeToken(ctx, request.body.token, cookieOf(request));
      if ('end' in r) {
        const t = SESSION_END_TEXT[r.end];
        return sendProblem(request, reply, problem('connect_session_invalid', t.detail, { details: { reason: r.end, heading: t.heading, message: t.detail } }));
      }
      const maxAge = Math.max(1, Math.floor((Date.parse(r.session.expires_at) - ctx.now()) / 1000));
      // A widget session is framed by its origin: its cookie must work in a third-party frame.
      const inFrame = kit.framed || r.session.allowed_origin !== null;
      const secure = inFrame || ctx.publicUrl().startsWith('https:');
      const attrs = [
        `${CONNECT_COOKIE}=${r.browserSecret}`,
        `Path=${CONNECT_PAGE_PATH}`,
        'HttpOnly',
        `Max-Age=${maxAge}`,
        inFrame ? 'SameSite=None' : 'SameSite=Lax',
        ...(secure ? ['Secure'] : []),
        ...(inFrame ? ['Partitioned'] : []),
      ];
      request.log.info('connect session opened');
      return reply.code(204).header('set-cookie', attrs.join('; ')).header('cache-control', 'no-store').send();
    },
  );
}

/** A connector type's page: its forms (to connect, or to re-authorize one connector). */
export function typePageRoute(app: FastifyInstance, kit: ConnectPageKit): void {
  const { ctx } = kit;
  app.get<{ Params: { connector_type: string }; Querystring: { reconnect?: string } }>(CONNECT_TYPE_PATH, pub, async (request, reply) => {
    const s = await kit.sessionOr(request, reply);
    if (s === undefined) return reply;
    const type = request.params.connector_type;
    if (!allowedTypes(s).includes(type) || !ctx.registry.has(type)) return kit.notOffered(reply);
    const reconnect = await kit.reconnectTarget(s, type, request.query.reconnect);
    if (request.query.reconnect !== undefined && reconnect === undefined) return kit.notOffered(reply);
    return kit.renderType(reply, 200, s, type, { reconnect });
  });
}

/** The credentials form's post: the variant's fields, then the connection (or re-authorization). */
export function credentialsRoute(app: FastifyInstance, kit: ConnectPageKit): void {
  const { ctx } = kit;
  app.post<{ Params: { connector_type: string }; Body: FormBody }>(`${CONNECT_TYPE_PATH}/credentials`, pub, async (request, reply) => {
    const c = await kit.formContext(request, reply);
    if (c === undefined) return reply;
    const { s, form, type, reconnect } = c;
    const def = kit.variantsOf(type).defs.find((v) => v.name === form['variant'] && v.type !== 'oauth2');
    if (def === undefined) return kit.renderType(reply, 400, s, type, { reconnect, error: 'Choose one of the forms below.' });

    const credentials: Credentials = {};
    const fieldErrors: Record<string, string> = {};
    for (const [name, f] of Object.entries(def.fields)) {
      if (f === undefined) continue;
      const raw = (form[`field.${name}`] ?? '').trim();
      if (raw === '') {
        if (f.required !== false) fieldErrors[`${def.name}.${name}`] = `Enter your ${f.description ?? name}.`;
        continue;
      }
      credentials[name] = f.type === 'integer' || f.type === 'number' ? Number(raw) : f.type === 'boolean' ? raw === 'true' : raw;
    }
    const title = connectorType(ctx, type).manifest.title;
    if (Object.keys(fieldErrors).length > 0) return kit.renderType(reply, 400, s, type, { reconnect, error: 'Fill in the required fields.', fieldErrors });
    const submitted = Object.values(credentials).filter((v): v is string => typeof v === 'string');
    return kit.connectOnce(request, reply, { s, type, reconnect, submitted }, () =>
      reconnect !== undefined
        ? patchConnector(ctx, s.organization_id, reconnect.id, { credentials })
        : createConnector(ctx, s.organization_id, { customer_name: s.customer_name, connector_type: type, name: title, credentials }),
    );
  });
}

/** The message of a pre-consent field the OAuth start refused (missing or not valid). */
function preConsentFieldError(oauthDef: OAuth2Auth, name: string, given: boolean): string {
  const f = oauthDef.fields[name];
  const about = `${humanize(name).toLowerCase()}${f?.description !== undefined ? ` (${f.description})` : ''}`;
  return !given ? `Enter your ${about}.` : `This is not a valid ${about}.`;
}

/** The OAuth button's post: the variant's pre-consent fields, then the redirect to the provider's consent page. */
export function oauthStartRoute(app: FastifyInstance, kit: ConnectPageKit): void {
  const { ctx } = kit;
  app.post<{ Params: { connector_type: string }; Body: FormBody }>(`${CONNECT_TYPE_PATH}/oauth`, pub, async (request, reply) => {
    const c = await kit.formContext(request, reply);
    if (c === undefined) return reply;
    const { s, form, type, reconnect } = c;
    try {
      deploymentOAuth(ctx, type);
    } catch (e) {
      if (!isSwitchboardError(e)) throw e;
      return kit.renderType(reply, e.status, s, type, { reconnect, error: e.message });
    }
    // The variant's pre-consent fields (a Zendesk subdomain) from the form; a missing or
    // refused value shows the form again with the field marked, and nothing is stored.
    const oauthDef = kit.variantsOf(type).defs.find((v): v is OAuth2Auth => v.type === 'oauth2');
    const given: Record<string, string> = {};
    const values: Record<string, string> = {};
    for (const name of oauthDef !== undefined ? preConsentFields(connectorType(ctx, type), oauthDef) : []) {
      const raw = (form[`field.${name}`] ?? '').trim();
      if (raw !== '') given[name] = raw;
      values[`${oauthDef?.name}.${name}`] = raw;
    }
    const back = withParams(`${ctx.publicUrl()}${CONNECT_OAUTH_RETURN_PATH}`, { type, ...(reconnect !== undefined ? { reconnect: reconnect.id } : {}) });
    let consent_url: string;
    try {
      ({ consent_url } = await initiateOAuth(
        ctx,
        { applicationId: s.application_id, organizationId: s.organization_id },
        { customer_name: s.customer_name, connector_type: type, redirect_url: back, credentials: given },
      ));
    } catch (e) {
      if (!isSwitchboardError(e) || e.code !== 'invalid_oauth_credentials' || oauthDef === undefined) throw e;
      const fieldErrors: Record<string, string> = {};
      for (const err of e.errors) {
        const name = err.path.replace(/^\/credentials\//, '');
        fieldErrors[`${oauthDef.name}.${name}`] = preConsentFieldError(oauthDef, name, given[name] !== undefined);
      }
      return kit.renderType(reply, 400, s, type, { reconnect, error: 'Fill in the fields below before continuing.', fieldErrors, values });
    }
    request.log.info({ connector_type: type }, 'connect UI: OAuth flow started');
    return reply.code(303).header('location', consent_url).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
  });
}

/** The provider's way back: the connection (or re-authorization) from the flow's pending secret, or the form with the provider's refusal. */
export function oauthReturnRoute(app: FastifyInstance, kit: ConnectPageKit): void {
  const { ctx } = kit;
  app.get<{ Querystring: Record<string, string | undefined> }>(CONNECT_OAUTH_RETURN_PATH, pub, async (request, reply) => {
    const s = await kit.sessionOr(request, reply);
    if (s === undefined) return reply;
    const q = request.query;
    const type = q['type'] ?? '';
    if (!allowedTypes(s).includes(type) || !ctx.registry.has(type)) return kit.notOffered(reply);
    const reconnect = await kit.reconnectTarget(s, type, q['reconnect']);
    if (q['reconnect'] !== undefined && reconnect === undefined) return kit.notOffered(reply);
    const title = connectorType(ctx, type).manifest.title;
    if (q['error'] !== undefined || q['secret_id'] === undefined) {
      const error = q['error'] ?? 'no_answer';
      const message =
        error === 'access_denied'
          ? `Access to ${title} was not granted (access_denied). Try again and allow access.`
          : `${title} did not grant access: ${q['error_description'] ?? error} (${error})`;
      return kit.renderType(reply, 400, s, type, { reconnect, error: message });
    }
    const secretId = q['secret_id'];
    return kit.connectOnce(request, reply, { s, type, reconnect, submitted: [] }, () =>
      reconnect === undefined
        ? createConnector(ctx, s.organization_id, { customer_name: s.customer_name, connector_type: type, name: title, server_side_oauth_secret_id: secretId })
        : reauthorizeFromSecret(ctx, s, reconnect.id, type, secretId),
    );
  });
}

/**
 * Re-authorize a connector with the tokens of a finished OAuth flow, like create's variant B:
 * in one transaction the pending secret (only the session's organization, customer and type)
 * is consumed, the connector takes its tokens under the flow's variant, and the sealed copy is
 * wiped; any failure leaves both as they were.
 */
async function reauthorizeFromSecret(ctx: ServiceContext, s: ConnectSessionRow, connectorId: string, type: string, secretId: string): Promise<ConnectorRow> {
  const manifest = connectorType(ctx, type);
  const idHash = sha256Hex(secretId);
  const now = nowIso(ctx);
  const row = await ctx.store.transaction(async (tx) => {
    const secret = await tx.consumeOAuthSecret({ idHash, organizationId: s.organization_id, connectorType: type, customerName: s.customer_name }, now);
    if (secret === undefined) throw new SwitchboardError('invalid_oauth_secret', 'The OAuth secret is unknown, expired or already used');
    const credentials = ctx.keyRing.openJson<Credentials>({ keyId: secret.key_id, ciphertext: secret.ciphertext }, oauthSecretContext(idHash));
    const variant = validateCredentials(manifest, credentials, secret.auth_variant);
    const sealed = ctx.keyRing.sealJson(credentials, connectorCredentialsContext(connectorId));
    // New credentials from the provider: the connector is healthy again (as after a PATCH of credentials).
    const updated = await tx.updateConnector(s.organization_id, connectorId, {
      auth_variant: variant,
      credentials_key_id: sealed.keyId,
      credentials_ciphertext: sealed.ciphertext,
      updated_at: now,
      status: 'active',
      last_error: null,
    });
    if (updated === undefined) throw new SwitchboardError('connector_not_found', `No connector ${connectorId} in this organization`);
    await tx.wipeOAuthSecret(idHash);
    return updated;
  });
  ctx.runtimes.forget(connectorId);
  await ctx.sync.resume(connectorId); // a connector paused as auth_failed is synced again
  return row;
}
