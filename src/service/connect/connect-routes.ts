/**
 * The Connect UI over HTTP: the session endpoint (organization token) and the page (public,
 * authenticated by the session cookie). The page's routes live in their own plugin so that their
 * HTML error page, form-body parser and security headers apply to them alone.
 *
 * Security headers on every page: a CSP with no inline code (script and style from 'self' only),
 * form-action limited to this service and the configured OAuth consent pages, frame-ancestors
 * from SWITCHBOARD_CONNECT_FRAME_ANCESTORS (default 'none'), no-store, no Referer.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Credentials } from '../../auth/index.ts';
import { isSwitchboardError, SwitchboardError } from '../../errors/index.ts';
import type { AuthVariant, OAuth2Auth } from '../../manifest/index.ts';
import type { ConnectorRow } from '../../store/index.ts';
import { principalOf } from '../authentication.ts';
import { createConnector, patchConnector } from '../connectors.ts';
import { connectorType, nowIso, type ServiceContext } from '../context.ts';
import { deploymentOAuth, initiateOAuth, oauthSecretContext, preConsentFields } from '../oauth-flow.ts';
import { checkBody } from '../http-hygiene.ts';
import { scrubSecrets } from '../../engine/secret-scrub.ts';
import { problem, sendProblem, toProblem } from '../problem.ts';
import { connectorCredentialsContext, validateCredentials } from '../runtime-pool.ts';
import { sha256Hex } from '../secrets.ts';
import { customerNames } from '../customers.ts';
import { brandCss } from './connect-brand.ts';
import type { ConnectTables } from './connect-migrations.ts';
import { bootstrapPage, homePage, messagePage, successPage, typePage, type FormField, type HomeType, type TypePageVariant } from './connect-html.ts';
import { ConnectExchangeRequestSchema, ConnectSessionSchema, CreateConnectSessionRequestSchema } from './connect-schemas.ts';
import {
  allowedTypes,
  claimSession,
  completeSession,
  CONNECT_COOKIE,
  CONNECT_PAGE_PATH,
  CONNECT_SESSIONS_PATH,
  createConnectSession,
  csrfToken,
  csrfValid,
  exchangeToken,
  httpOrigin,
  releaseSession,
  SESSION_END_TEXT,
  sessionFromCookie,
  type ConnectSessionRow,
  type CreateSessionBody,
  type SessionClaim,
  type SessionEnd,
} from './connect-sessions.ts';

export const CONNECT_EXCHANGE_PATH = '/connect/session';
export const CONNECT_TYPE_PATH = '/connect/types/:connector_type';
export const CONNECT_OAUTH_RETURN_PATH = '/connect/oauth/return';
/** Where a finished connection lands (post/redirect/get): reloading it re-posts nothing. */
export const CONNECT_DONE_PATH = '/connect/done';
export const CONNECT_ASSETS = ['/connect/assets/connect.js', '/connect/assets/connect.css'] as const;

const ASSETS: Record<string, { file: string; type: string }> = {
  '/connect/assets/connect.js': { file: 'connect.js', type: 'text/javascript; charset=utf-8' },
  '/connect/assets/connect.css': { file: 'connect.css', type: 'text/css; charset=utf-8' },
};

/** The session endpoint and the page's routes. */
export function connectRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.post<{ Body: CreateSessionBody }>(
      CONNECT_SESSIONS_PATH,
      {
        config: { customerScoped: true },
        preValidation: customerNames(ctx, 'body'),
        schema: { body: CreateConnectSessionRequestSchema, response: { 201: ConnectSessionSchema } },
      },
      async (request, reply) => {
        const p = principalOf(request);
        const session = await createConnectSession(ctx, { applicationId: p.applicationId, organizationId: p.organizationId }, request.body);
        request.log.info({ allowed_connector_types: request.body.allowed_connector_types ?? 'all' }, 'connect session created');
        return reply.code(201).header('cache-control', 'no-store').send(session);
      },
    );
    await app.register(connectPages(ctx));
  };
}

type FormBody = Record<string, string>;

function cookieOf(request: FastifyRequest): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === CONNECT_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The status of a connector (active, auth_failed, error), as the connector health check keeps it. */
function statusOf(row: ConnectorRow): string {
  return row.status;
}

/** A field name as a label: subdomain → Subdomain, site_url → Site url. */
function humanize(name: string): string {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

function connectPages(ctx: ServiceContext) {
  return async function pages(app: FastifyInstance): Promise<void> {
    const assets = new Map(Object.entries(ASSETS).map(([path, a]) => [path, { body: readFileSync(new URL(`./assets/${a.file}`, import.meta.url)), type: a.type }]));
    const brand = ctx.config.connectBrand ?? {};
    // The accent colour (empty without one; the pages link it only when there is one).
    assets.set('/connect/assets/brand.css', { body: Buffer.from(brandCss(brand)), type: 'text/css; charset=utf-8' });
    // Logos may live on other https origins (the operator's, a manifest's): the CSP allows exactly those.
    const logoOrigins = new Set<string>();
    for (const logo of [brand.logoUrl, ...[...ctx.registry.values()].map((m) => m.manifest.logo)]) if (logo?.startsWith('https://')) logoOrigins.add(new URL(logo).origin);
    const frameAncestors = ctx.config.connectFrameAncestors;
    const framed = frameAncestors.length > 0;
    // OAuth buttons post to us and we redirect to the provider: form-action must allow its origin.
    const consentOrigins = new Set<string>();
    for (const [type, cfg] of Object.entries(ctx.config.connectorTypes)) {
      if (cfg.oauth === undefined) continue;
      const variant = ctx.registry.get(type)?.manifest.auth.find((v) => v.type === 'oauth2');
      const url = cfg.oauth.authorizeUrl ?? (variant !== undefined && variant.type === 'oauth2' ? variant.authorize_url : undefined);
      // A URL naming the account's host (https://{{credentials.subdomain}}.zendesk.com/...) allows every such host: https://*.zendesk.com.
      if (url !== undefined) consentOrigins.add(url.includes('{{') ? (/^https?:\/\/[^/]+/.exec(url)?.[0] ?? '').replace(/\{\{[^}]*\}\}/g, '*') : new URL(url).origin);
    }
    // A widget session's pages may be framed by its one origin only (instead of the deployment's setting).
    const frameOrigin = new WeakMap<FastifyReply, string>();
    const cspFor = (ancestors: string): string => [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      `img-src 'self' data:${[...logoOrigins].map((o) => ` ${o}`).join('')}`,
      "connect-src 'self'",
      `form-action 'self'${[...consentOrigins].map((o) => ` ${o}`).join('')}`,
      `frame-ancestors ${ancestors}`,
      "base-uri 'none'",
    ].join('; ');
    const csp = cspFor(framed ? frameAncestors.join(' ') : "'none'");

    const html = (reply: FastifyReply, status: number, body: string): FastifyReply => {
      const origin = frameOrigin.get(reply);
      void reply
        .code(status)
        .type('text/html; charset=utf-8')
        .header('content-security-policy', origin !== undefined ? cspFor(origin) : csp)
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .header('x-content-type-options', 'nosniff');
      if (!framed && origin === undefined) void reply.header('x-frame-options', 'DENY');
      return reply.send(body);
    };
    const ended = (reply: FastifyReply, end: SessionEnd): FastifyReply => html(reply, end === 'invalid' ? 401 : 410, messagePage(SESSION_END_TEXT[end].heading, SESSION_END_TEXT[end].detail, brand));
    const notOffered = (reply: FastifyReply): FastifyReply => html(reply, 404, messagePage('Not available here', 'This app is not offered by this connection link.', brand));

    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      const out: FormBody = {};
      for (const [k, v] of new URLSearchParams(body as string)) out[k] = v;
      const refused = checkBody(out);
      if (refused !== undefined) done(refused);
      else done(null, out);
    });
    app.setErrorHandler((err, request, reply) => {
      const p = toProblem(err);
      if (p.status >= 500) request.log.error({ code: p.code, detail: p.detail, err_name: (err as Error).name, stack: (err as Error).stack }, 'request failed');
      else request.log.info({ code: p.code, status: p.status }, 'request refused');
      if (request.url.split('?')[0] === CONNECT_EXCHANGE_PATH) return sendProblem(request, reply, p);
      if (p.status >= 500) return html(reply, p.status, messagePage('Something went wrong', 'The connection could not be completed. Try again in a moment.', brand));
      return html(reply, p.status, messagePage('This request could not be handled', p.detail, brand));
    });

    const pub = { config: { auth: 'public' as const } };

    for (const [path, a] of assets) {
      app.get(path, pub, async (_request, reply) => reply.type(a.type).header('cache-control', 'public, max-age=300').header('x-content-type-options', 'nosniff').send(a.body));
    }
    // Browsers ask for /favicon.ico on their own; the pages name their icon (the operator's logo
    // or none), so this answers "no content" without asking for credentials.
    app.get('/favicon.ico', pub, async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());

    /** The session of the request's cookie, or the page saying why there is none (then undefined). */
    const sessionOr = async (request: FastifyRequest, reply: FastifyReply): Promise<ConnectSessionRow | undefined> => {
      const r = await sessionFromCookie(ctx, cookieOf(request));
      if (r.session !== undefined) {
        if (r.session.allowed_origin !== null) frameOrigin.set(reply, r.session.allowed_origin);
        return r.session;
      }
      ended(reply, r.end);
      return undefined;
    };

    const customerConnectors = async (s: ConnectSessionRow): Promise<ConnectorRow[]> =>
      ctx.store.listConnectors(s.organization_id, { customerName: s.customer_name, limit: 500 });

    /** The connector to re-authorize: the session customer's, of this type; undefined when the id is not one. */
    const reconnectTarget = async (s: ConnectSessionRow, type: string, id: string | undefined): Promise<ConnectorRow | undefined> => {
      if (id === undefined || id === '') return undefined;
      const row = await ctx.store.getConnector(s.organization_id, id).catch(() => undefined);
      return row !== undefined && row.customer_name === s.customer_name && row.connector_type === type ? row : undefined;
    };

    const variantsOf = (type: string): { variants: TypePageVariant[]; defs: AuthVariant[] } => {
      const m = connectorType(ctx, type);
      const oauthReady = ctx.config.connectorTypes[type]?.oauth !== undefined;
      const defs = m.manifest.auth.filter((v) => v.type !== 'oauth2' || oauthReady);
      const variants = defs.map((v) => ({
        name: v.name,
        title: v.title ?? v.name,
        description: v.description,
        oauth: v.type === 'oauth2',
        // An OAuth variant asks only for its pre-consent fields (a Zendesk subdomain), labelled by
        // name with the description as hint; the provider supplies the rest.
        fields:
          v.type === 'oauth2'
            ? preConsentFields(m, v).flatMap((name): FormField[] => {
                const f = v.fields[name];
                return f === undefined ? [] : [{ name, label: humanize(name), hint: f.description, secret: false, required: f.required !== false, type: f.type, pattern: f.pattern }];
              })
            : Object.entries(v.fields).flatMap(([name, f]): FormField[] =>
                f === undefined ? [] : [{ name, label: f.description ?? name, secret: f.secret === true, required: f.required !== false, type: f.type, ...(f.multiline === true ? { multiline: true } : {}) }],
              ),
      }));
      return { variants, defs };
    };

    const renderType = (
      reply: FastifyReply,
      status: number,
      s: ConnectSessionRow,
      type: string,
      extra: { reconnect?: ConnectorRow | undefined; error?: string; errorDetail?: string | undefined; fieldErrors?: Record<string, string>; values?: Record<string, string> } = {},
    ): FastifyReply => {
      const m = connectorType(ctx, type).manifest;
      return html(
        reply,
        status,
        typePage({
          type,
          title: m.title,
          description: m.description,
          docsUrl: m.docs_url,
          logo: m.logo,
          brand,
          variants: variantsOf(type).variants,
          csrf: csrfToken(ctx, s),
          reconnect: extra.reconnect !== undefined ? { id: extra.reconnect.id, name: extra.reconnect.name } : undefined,
          error: extra.error,
          errorDetail: extra.errorDetail,
          fieldErrors: extra.fieldErrors,
          values: extra.values,
        }),
      );
    };

    /** A finished connection: mark the session used and show the page that reports it. */
    const finish = async (request: FastifyRequest, reply: FastifyReply, s: ConnectSessionRow, claim: SessionClaim, row: ConnectorRow, reconnected: boolean): Promise<FastifyReply> => {
      if (!reconnected) {
        try {
          await ctx.hooks.onConnectorCreated?.(row);
        } catch (e) {
          request.log.error({ connector_id: row.id, err: e }, 'onConnectorCreated hook failed');
        }
      }
      if (!(await completeSession(ctx, claim, row.id))) request.log.warn({ connector_id: row.id }, 'connect session ended while the connection was being made');
      request.log.info({ connector_id: row.id, connector_type: row.connector_type, reconnected }, 'connect UI: connection finished');
      // Post/redirect/get: the success page is a GET of its own, safe to reload.
      const done = `${CONNECT_DONE_PATH}?${new URLSearchParams({ connector_id: row.id, ...(reconnected ? { reconnected: '1' } : {}) }).toString()}`;
      return reply.code(303).header('location', done).header('cache-control', 'no-store').send();
    };

    /** The success page of a finished connection, for the browser whose session made it (any reload included). */
    app.get<{ Querystring: Record<string, string | undefined> }>(CONNECT_DONE_PATH, pub, async (request, reply) => {
      const cookie = cookieOf(request);
      const s =
        cookie === undefined || cookie === ''
          ? undefined
          : await (ctx.database.db as unknown as Kysely<ConnectTables>).selectFrom('connect_sessions').selectAll().where('browser_hash', '=', sha256Hex(cookie)).executeTakeFirst();
      if (s === undefined) return ended(reply, 'invalid');
      const row = await ctx.store.getConnector(s.organization_id, request.query['connector_id'] ?? '').catch(() => undefined);
      if (s.allowed_origin !== null) frameOrigin.set(reply, s.allowed_origin);
      if (row === undefined || row.customer_name !== s.customer_name || !allowedTypes(s).includes(row.connector_type)) return notOffered(reply);
      const redirect = s.redirect_url !== null ? withParams(s.redirect_url, { connector_id: row.id, connector_type: row.connector_type }) : undefined;
      return html(
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
          brand,
        }),
      );
    });

    /**
     * An error of the create/re-authorize path in plain words, and the third-party API's own text
     * (without our "<type>: " prefix) as detail; any submitted secret removed from both.
     */
    const plainMessage = (type: string, title: string, e: SwitchboardError, submitted: string[]): { error: string; errorDetail?: string } => {
      const msg = scrubSecrets(e.message, submitted);
      const upstream = msg.startsWith(`${type}: `) ? msg.slice(type.length + 2) : msg;
      switch (e.code) {
        case 'upstream_credentials_rejected':
          return {
            error: `${title} did not accept ${submitted.length === 1 ? 'this key' : 'these credentials'}. Check that you copied ${submitted.length === 1 ? 'all of it' : 'them'} from the right ${title} account, then try again.`,
            errorDetail: upstream,
          };
        case 'upstream_unavailable':
          return { error: `${title} could not be reached right now. Try again in a few minutes.`, errorDetail: upstream };
        case 'invalid_oauth_secret':
          return { error: `The sign-in with ${title} took too long or was already used. Start again.` };
        default:
          return { error: msg };
      }
    };

    /**
     * Make the session's one connection: claim the session first (one atomic UPDATE, before any
     * upstream check), so concurrent submits with one cookie make exactly one connector; the
     * others answer 409 at once (or say how the session ended). A failed attempt (wrong key,
     * upstream down) releases the claim and shows the form again, so the user can retry.
     */
    const connectOnce = async (
      request: FastifyRequest,
      reply: FastifyReply,
      c: { s: ConnectSessionRow; type: string; reconnect: ConnectorRow | undefined; submitted: string[] },
      make: () => Promise<ConnectorRow>,
    ): Promise<FastifyReply> => {
      const { s, type, reconnect } = c;
      const claimed = await claimSession(ctx, s.id);
      if (claimed.claim === undefined) {
        request.log.info({ connector_type: type, reason: claimed.why }, 'connect UI: session not claimed');
        if (claimed.why === 'busy') return html(reply, 409, messagePage('Already connecting', 'This link is being used to connect right now, in this or another window. Wait for that to finish.'));
        return ended(reply, claimed.why);
      }
      let row: ConnectorRow;
      try {
        row = await make();
      } catch (e) {
        await releaseSession(ctx, claimed.claim);
        if (!shownToUser(e)) throw e;
        request.log.info({ code: e.code, connector_type: type }, 'connect UI: connection refused');
        return renderType(reply, e.status, s, type, { reconnect, ...plainMessage(type, connectorType(ctx, type).manifest.title, e, c.submitted) });
      }
      return finish(request, reply, s, claimed.claim, row, reconnect !== undefined);
    };

    app.get(CONNECT_PAGE_PATH, pub, async (request, reply) => {
      const cookie = cookieOf(request);
      const r = await sessionFromCookie(ctx, cookie);
      if (r.session === undefined) {
        // No session yet: the script exchanges the fragment token (or says the link is incomplete).
        // A widget link's ?origin= may frame this first page, which holds nothing; the pages after it keep to the session's origin.
        const asked = (request.query as Record<string, unknown> | undefined)?.['origin'];
        const origin = typeof asked === 'string' ? httpOrigin(asked) : undefined;
        if (origin !== undefined && r.end === 'invalid') frameOrigin.set(reply, origin);
        return r.end === 'invalid' ? html(reply, 200, bootstrapPage(brand)) : ended(reply, r.end);
      }
      const s = r.session;
      if (s.allowed_origin !== null) frameOrigin.set(reply, s.allowed_origin);
      const rows = await customerConnectors(s);
      const types: HomeType[] = allowedTypes(s).flatMap((type) => {
        const m = ctx.registry.get(type);
        if (m === undefined) return [];
        return [
          {
            type,
            title: m.manifest.title,
            description: m.manifest.description,
            logo: m.manifest.logo,
            connectors: rows.filter((c) => c.connector_type === type).map((c) => ({ id: c.id, name: c.name, status: statusOf(c), created_at: c.created_at })),
          },
        ];
      });
      return html(reply, 200, homePage(types, brand));
    });

    // JSON only: an HTML form from another site (no CORS preflight needed) must not plant its session here (login CSRF).
    const jsonOnly = (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
      const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      done(type === 'application/json' ? undefined : new SwitchboardError('unsupported_media_type', 'Send the token as JSON with Content-Type: application/json'));
    };
    app.post<{ Body: { token: string } }>(CONNECT_EXCHANGE_PATH, { ...pub, preValidation: jsonOnly, schema: { body: ConnectExchangeRequestSchema } }, async (request, reply) => {
      const r = await exchangeToken(ctx, request.body.token, cookieOf(request));
      if ('end' in r) {
        const t = SESSION_END_TEXT[r.end];
        return sendProblem(request, reply, problem('connect_session_invalid', t.detail, { details: { reason: r.end, heading: t.heading, message: t.detail } }));
      }
      const maxAge = Math.max(1, Math.floor((Date.parse(r.session.expires_at) - ctx.now()) / 1000));
      // A widget session is framed by its origin: its cookie must work in a third-party frame.
      const inFrame = framed || r.session.allowed_origin !== null;
      const secure = inFrame || ctx.publicUrl().startsWith('https:');
      const attrs = [`${CONNECT_COOKIE}=${r.browserSecret}`, `Path=${CONNECT_PAGE_PATH}`, 'HttpOnly', `Max-Age=${maxAge}`, inFrame ? 'SameSite=None' : 'SameSite=Lax', ...(secure ? ['Secure'] : []), ...(inFrame ? ['Partitioned'] : [])];
      request.log.info('connect session opened');
      return reply.code(204).header('set-cookie', attrs.join('; ')).header('cache-control', 'no-store').send();
    });

    app.get<{ Params: { connector_type: string }; Querystring: { reconnect?: string } }>(CONNECT_TYPE_PATH, pub, async (request, reply) => {
      const s = await sessionOr(request, reply);
      if (s === undefined) return reply;
      const type = request.params.connector_type;
      if (!allowedTypes(s).includes(type) || !ctx.registry.has(type)) return notOffered(reply);
      const reconnect = await reconnectTarget(s, type, request.query.reconnect);
      if (request.query.reconnect !== undefined && reconnect === undefined) return notOffered(reply);
      return renderType(reply, 200, s, type, { reconnect });
    });

    /**
     * What every form post checks first: a live session, its CSRF token, a connector type the
     * session offers, and the connector to re-authorize when one is named. Undefined once the
     * page saying why not has been sent.
     */
    const formContext = async (
      request: FastifyRequest<{ Params: { connector_type: string }; Body: FormBody }>,
      reply: FastifyReply,
    ): Promise<{ s: ConnectSessionRow; form: FormBody; type: string; reconnect: ConnectorRow | undefined } | undefined> => {
      const s = await sessionOr(request, reply);
      if (s === undefined) return undefined;
      const form = request.body ?? {};
      if (!csrfValid(ctx, s, form['csrf'])) {
        html(reply, 403, messagePage('This form has expired', 'Reload the page and try again.', brand));
        return undefined;
      }
      const type = request.params.connector_type;
      if (!allowedTypes(s).includes(type) || !ctx.registry.has(type)) {
        notOffered(reply);
        return undefined;
      }
      const reconnect = await reconnectTarget(s, type, form['reconnect']);
      if (form['reconnect'] !== undefined && reconnect === undefined) {
        notOffered(reply);
        return undefined;
      }
      return { s, form, type, reconnect };
    };

    app.post<{ Params: { connector_type: string }; Body: FormBody }>(`${CONNECT_TYPE_PATH}/credentials`, pub, async (request, reply) => {
      const c = await formContext(request, reply);
      if (c === undefined) return reply;
      const { s, form, type, reconnect } = c;
      const def = variantsOf(type).defs.find((v) => v.name === form['variant'] && v.type !== 'oauth2');
      if (def === undefined) return renderType(reply, 400, s, type, { reconnect, error: 'Choose one of the forms below.' });

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
      if (Object.keys(fieldErrors).length > 0) return renderType(reply, 400, s, type, { reconnect, error: 'Fill in the required fields.', fieldErrors });
      const submitted = Object.values(credentials).filter((v): v is string => typeof v === 'string');
      return connectOnce(request, reply, { s, type, reconnect, submitted }, () =>
        reconnect !== undefined
          ? patchConnector(ctx, s.organization_id, reconnect.id, { credentials })
          : createConnector(ctx, s.organization_id, { customer_name: s.customer_name, connector_type: type, name: title, credentials }),
      );
    });

    app.post<{ Params: { connector_type: string }; Body: FormBody }>(`${CONNECT_TYPE_PATH}/oauth`, pub, async (request, reply) => {
      const c = await formContext(request, reply);
      if (c === undefined) return reply;
      const { s, form, type, reconnect } = c;
      try {
        deploymentOAuth(ctx, type);
      } catch (e) {
        if (!isSwitchboardError(e)) throw e;
        return renderType(reply, e.status, s, type, { reconnect, error: e.message });
      }
      // The variant's pre-consent fields (a Zendesk subdomain) from the form; a missing or
      // refused value shows the form again with the field marked, and nothing is stored.
      const oauthDef = variantsOf(type).defs.find((v): v is OAuth2Auth => v.type === 'oauth2');
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
        ({ consent_url } = await initiateOAuth(ctx, { applicationId: s.application_id, organizationId: s.organization_id }, { customer_name: s.customer_name, connector_type: type, redirect_url: back, credentials: given }));
      } catch (e) {
        if (!isSwitchboardError(e) || e.code !== 'invalid_oauth_credentials' || oauthDef === undefined) throw e;
        const fieldErrors: Record<string, string> = {};
        for (const err of e.errors) {
          const name = err.path.replace(/^\/credentials\//, '');
          const f = oauthDef.fields[name];
          fieldErrors[`${oauthDef.name}.${name}`] = given[name] === undefined ? `Enter your ${humanize(name).toLowerCase()}${f?.description !== undefined ? ` (${f.description})` : ''}.` : `This is not a valid ${humanize(name).toLowerCase()}${f?.description !== undefined ? ` (${f.description})` : ''}.`;
        }
        return renderType(reply, 400, s, type, { reconnect, error: 'Fill in the fields below before continuing.', fieldErrors, values });
      }
      request.log.info({ connector_type: type }, 'connect UI: OAuth flow started');
      return reply.code(303).header('location', consent_url).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
    });

    app.get<{ Querystring: Record<string, string | undefined> }>(CONNECT_OAUTH_RETURN_PATH, pub, async (request, reply) => {
      const s = await sessionOr(request, reply);
      if (s === undefined) return reply;
      const q = request.query;
      const type = q['type'] ?? '';
      if (!allowedTypes(s).includes(type) || !ctx.registry.has(type)) return notOffered(reply);
      const reconnect = await reconnectTarget(s, type, q['reconnect']);
      if (q['reconnect'] !== undefined && reconnect === undefined) return notOffered(reply);
      const title = connectorType(ctx, type).manifest.title;
      if (q['error'] !== undefined || q['secret_id'] === undefined) {
        const error = q['error'] ?? 'no_answer';
        const message =
          error === 'access_denied'
            ? `Access to ${title} was not granted (access_denied). Try again and allow access.`
            : `${title} did not grant access: ${q['error_description'] ?? error} (${error})`;
        return renderType(reply, 400, s, type, { reconnect, error: message });
      }
      const secretId = q['secret_id'];
      return connectOnce(request, reply, { s, type, reconnect, submitted: [] }, () =>
        reconnect === undefined
          ? createConnector(ctx, s.organization_id, { customer_name: s.customer_name, connector_type: type, name: title, server_side_oauth_secret_id: secretId })
          : reauthorizeFromSecret(ctx, s, reconnect.id, type, secretId),
      );
    });
  };
}

/**
 * Errors the user can act on, shown on the form: the caller's input and every answer of the
 * third-party API (a 503 upstream_unavailable too). Internal failures get the generic page.
 */
function shownToUser(e: unknown): e is SwitchboardError {
  return isSwitchboardError(e) && (e.status < 500 || e.code.startsWith('upstream_') || e.code === 'oauth_refresh_failed');
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
    const updated = await tx.updateConnector(s.organization_id, connectorId, { auth_variant: variant, credentials_key_id: sealed.keyId, credentials_ciphertext: sealed.ciphertext, updated_at: now, status: 'active', last_error: null });
    if (updated === undefined) throw new SwitchboardError('connector_not_found', `No connector ${connectorId} in this organization`);
    await tx.wipeOAuthSecret(idHash);
    return updated;
  });
  ctx.runtimes.forget(connectorId);
  await ctx.sync.resume(connectorId); // a connector paused as auth_failed is synced again
  return row;
}
