/**
 * What the Connect UI's pages share (connect-pages.ts): the security headers of every page (a
 * CSP with no inline code, form-action limited to this service and the configured OAuth consent
 * pages, frame-ancestors from SWITCHBOARD_CONNECT_FRAME_ANCESTORS or a widget session's origin,
 * no-store, no Referer), the session of the request's cookie, the connector type's form, and
 * the one connection a session makes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isSwitchboardError, SwitchboardError } from '../../errors/index.ts';
import type { AuthVariant } from '../../manifest/index.ts';
import type { ConnectorRow } from '../../store/index.ts';
import { scrubSecrets } from '../../engine/secret-scrub.ts';
import { connectorType, type ServiceContext } from '../context.ts';
import type { AuditNote } from '../ops/audit-log.ts';
import { preConsentFields } from '../connectors/oauth-flow.ts';
import type { ConnectBrand } from './connect-brand.ts';
import { messagePage, typePage, type FormField, type TypePageVariant } from './connect-html.ts';
import {
  allowedTypes,
  claimSession,
  completeSession,
  CONNECT_COOKIE,
  csrfToken,
  csrfValid,
  releaseSession,
  SESSION_END_TEXT,
  sessionFromCookie,
  type ConnectSessionRow,
  type SessionClaim,
  type SessionEnd,
} from './connect-sessions.ts';

export const CONNECT_EXCHANGE_PATH = '/connect/session';
export const CONNECT_TYPE_PATH = '/connect/types/:connector_type';
export const CONNECT_OAUTH_RETURN_PATH = '/connect/oauth/return';
/** Where a finished connection lands (post/redirect/get): reloading it re-posts nothing. */
export const CONNECT_DONE_PATH = '/connect/done';

export type FormBody = Record<string, string>;

/** What a form post carries once checked (formContext). */
export interface FormContext {
  s: ConnectSessionRow;
  form: FormBody;
  type: string;
  reconnect: ConnectorRow | undefined;
}

/** What the type page shows besides the type's forms. */
export interface TypePageExtra {
  reconnect?: ConnectorRow | undefined;
  error?: string;
  errorDetail?: string | undefined;
  fieldErrors?: Record<string, string>;
  values?: Record<string, string>;
}

export function cookieOf(request: FastifyRequest): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === CONNECT_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A field name as a label: subdomain → Subdomain, site_url → Site url. */
export function humanize(name: string): string {
  const words = name.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function withParams(url: string, params: Record<string, string>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
}

/**
 * Errors the user can act on, shown on the form: the caller's input and every answer of the
 * third-party API (a 503 upstream_unavailable too). Internal failures get the generic page.
 */
function shownToUser(e: unknown): e is SwitchboardError {
  return isSwitchboardError(e) && (e.status < 500 || e.code.startsWith('upstream_') || e.code === 'oauth_refresh_failed');
}

/**
 * An error of the create/re-authorize path in plain words, and the third-party API's own text
 * (without our "<type>: " prefix) as detail; any submitted secret removed from both.
 */
function plainMessage(type: string, title: string, e: SwitchboardError, submitted: string[]): { error: string; errorDetail?: string } {
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
}

/** The origins the CSP must allow: logos on other https origins, and the OAuth consent pages the forms post to. */
function cspOrigins(ctx: ServiceContext, brand: ConnectBrand): { logos: Set<string>; consent: Set<string> } {
  // Logos may live on other https origins (the operator's, a manifest's): the CSP allows exactly those.
  const logos = new Set<string>();
  for (const logo of [brand.logoUrl, ...[...ctx.registry.values()].map((m) => m.manifest.logo)])
    if (logo?.startsWith('https://')) logos.add(new URL(logo).origin);
  // OAuth buttons post to us and we redirect to the provider: form-action must allow its origin.
  const consent = new Set<string>();
  for (const [type, cfg] of Object.entries(ctx.config.connectorTypes)) {
    if (cfg.oauth === undefined) continue;
    const variant = ctx.registry.get(type)?.manifest.auth.find((v) => v.type === 'oauth2');
    const url = cfg.oauth.authorizeUrl ?? (variant !== undefined && variant.type === 'oauth2' ? variant.authorize_url : undefined);
    // A URL naming the account's host (https://{{credentials.subdomain}}.zendesk.com/...) allows every such host: https://*.zendesk.com.
    if (url !== undefined) consent.add(url.includes('{{') ? (/^https?:\/\/[^/]+/.exec(url)?.[0] ?? '').replace(/\{\{[^}]*\}\}/g, '*') : new URL(url).origin);
  }
  return { logos, consent };
}

/** The pages' shared machinery, built once per registration of the pages' plugin. */
export class ConnectPageKit {
  readonly brand: ConnectBrand;
  /** Whether the deployment lets other origins frame the pages. */
  readonly framed: boolean;
  /** A widget session's pages may be framed by its one origin only (instead of the deployment's setting). */
  readonly frameOrigin = new WeakMap<FastifyReply, string>();
  private readonly logoOrigins: Set<string>;
  private readonly consentOrigins: Set<string>;
  private readonly csp: string;

  constructor(readonly ctx: ServiceContext) {
    this.brand = ctx.config.connectBrand ?? {};
    const frameAncestors = ctx.config.connectFrameAncestors;
    this.framed = frameAncestors.length > 0;
    const { logos, consent } = cspOrigins(ctx, this.brand);
    this.logoOrigins = logos;
    this.consentOrigins = consent;
    this.csp = this.cspFor(this.framed ? frameAncestors.join(' ') : "'none'");
  }

  private cspFor(ancestors: string): string {
    return [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      `img-src 'self' data:${[...this.logoOrigins].map((o) => ` ${o}`).join('')}`,
      "connect-src 'self'",
      `form-action 'self'${[...this.consentOrigins].map((o) => ` ${o}`).join('')}`,
      `frame-ancestors ${ancestors}`,
      "base-uri 'none'",
    ].join('; ');
  }

  /** An HTML page with the security headers. */
  html(reply: FastifyReply, status: number, body: string): FastifyReply {
    const origin = this.frameOrigin.get(reply);
    void reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('content-security-policy', origin !== undefined ? this.cspFor(origin) : this.csp)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-content-type-options', 'nosniff');
    if (!this.framed && origin === undefined) void reply.header('x-frame-options', 'DENY');
    return reply.send(body);
  }

  ended(reply: FastifyReply, end: SessionEnd): FastifyReply {
    return this.html(reply, end === 'invalid' ? 401 : 410, messagePage(SESSION_END_TEXT[end].heading, SESSION_END_TEXT[end].detail, this.brand));
  }

  notOffered(reply: FastifyReply): FastifyReply {
    return this.html(reply, 404, messagePage('Not available here', 'This app is not offered by this connection link.', this.brand));
  }

  /** The session of the request's cookie, or the page saying why there is none (then undefined). */
  async sessionOr(request: FastifyRequest, reply: FastifyReply): Promise<ConnectSessionRow | undefined> {
    const r = await sessionFromCookie(this.ctx, cookieOf(request));
    if (r.session !== undefined) {
      if (r.session.allowed_origin !== null) this.frameOrigin.set(reply, r.session.allowed_origin);
      return r.session;
    }
    this.ended(reply, r.end);
    return undefined;
  }

  /** The connector to re-authorize: the session customer's, of this type; undefined when the id is not one. */
  async reconnectTarget(s: ConnectSessionRow, type: string, id: string | undefined): Promise<ConnectorRow | undefined> {
    if (id === undefined || id === '') return undefined;
    const row = await this.ctx.store.getConnector(s.organization_id, id).catch(() => undefined);
    return row !== undefined && row.customer_name === s.customer_name && row.connector_type === type ? row : undefined;
  }

  /** The type's forms: one per auth variant (OAuth ones only when the deployment configured OAuth for the type). */
  variantsOf(type: string): { variants: TypePageVariant[]; defs: AuthVariant[] } {
    const m = connectorType(this.ctx, type);
    const oauthReady = this.ctx.config.connectorTypes[type]?.oauth !== undefined;
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
              return f === undefined
                ? []
                : [
                    {
                      name,
                      label: humanize(name),
                      hint: f.description,
                      secret: false,
                      required: f.required !== false,
                      type: f.type,
                      pattern: f.pattern ?? f.enum?.map((e) => e.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'),
                    },
                  ];
            })
          : Object.entries(v.fields).flatMap(([name, f]): FormField[] =>
              f === undefined
                ? []
                : [
                    {
                      name,
                      label: f.description ?? name,
                      secret: f.secret === true,
                      required: f.required !== false,
                      type: f.type,
                      ...(f.multiline === true ? { multiline: true } : {}),
                    },
                  ],
            ),
    }));
    return { variants, defs };
  }

  renderType(reply: FastifyReply, status: number, s: ConnectSessionRow, type: string, extra: TypePageExtra = {}): FastifyReply {
    const m = connectorType(this.ctx, type).manifest;
    return this.html(
      reply,
      status,
      typePage({
        type,
        title: m.title,
        description: m.description,
        docsUrl: m.docs_url,
        logo: m.logo,
        brand: this.brand,
        variants: this.variantsOf(type).variants,
        csrf: csrfToken(this.ctx, s),
        reconnect: extra.reconnect !== undefined ? { id: extra.reconnect.id, name: extra.reconnect.name } : undefined,
        error: extra.error,
        errorDetail: extra.errorDetail,
        fieldErrors: extra.fieldErrors,
        values: extra.values,
      }),
    );
  }

  /** A finished connection: mark the session used and show the page that reports it. */
  private async finish(request: FastifyRequest, reply: FastifyReply, claim: SessionClaim, row: ConnectorRow, reconnected: boolean): Promise<FastifyReply> {
    if (!reconnected) {
      try {
        await this.ctx.hooks.onConnectorCreated?.(row);
      } catch (e) {
        request.log.error({ connector_id: row.id, err: e }, 'onConnectorCreated hook failed');
      }
    }
    if (!(await completeSession(this.ctx, claim, row.id)))
      request.log.warn({ connector_id: row.id }, 'connect session ended while the connection was being made');
    request.log.info({ connector_id: row.id, connector_type: row.connector_type, reconnected }, 'connect UI: connection finished');
    // Post/redirect/get: the success page is a GET of its own, safe to reload.
    const done = `${CONNECT_DONE_PATH}?${new URLSearchParams({ connector_id: row.id, ...(reconnected ? { reconnected: '1' } : {}) }).toString()}`;
    return reply.code(303).header('location', done).header('cache-control', 'no-store').send();
  }

  /**
   * Make the session's one connection: claim the session first (one atomic UPDATE, before any
   * upstream check), so concurrent submits with one cookie make exactly one connector; the
   * others answer 409 at once (or say how the session ended). A failed attempt (wrong key,
   * upstream down) releases the claim and shows the form again, so the user can retry.
   */
  async connectOnce(
    request: FastifyRequest,
    reply: FastifyReply,
    c: { s: ConnectSessionRow; type: string; reconnect: ConnectorRow | undefined; submitted: string[] },
    make: () => Promise<ConnectorRow>,
  ): Promise<FastifyReply> {
    const { s, type, reconnect } = c;
    const claimed = await claimSession(this.ctx, s.id);
    if (claimed.claim === undefined) {
      request.log.info({ connector_type: type, reason: claimed.why }, 'connect UI: session not claimed');
      if (claimed.why === 'busy')
        return this.html(
          reply,
          409,
          messagePage('Already connecting', 'This link is being used to connect right now, in this or another window. Wait for that to finish.'),
        );
      return this.ended(reply, claimed.why);
    }
    let row: ConnectorRow;
    try {
      row = await make();
    } catch (e) {
      await releaseSession(this.ctx, claimed.claim);
      if (!shownToUser(e)) throw e;
      request.log.info({ code: e.code, connector_type: type }, 'connect UI: connection refused');
      return this.renderType(reply, e.status, s, type, { reconnect, ...plainMessage(type, connectorType(this.ctx, type).manifest.title, e, c.submitted) });
    }
    // The audit log (ops/audit-log.ts): the Connect session acted, for its application and customer.
    request.auditNote = {
      organizationId: s.organization_id,
      action: reconnect !== undefined ? 'connector.reauthorized' : 'connector.created',
      outcome: 'success',
      resourceType: 'connector',
      resourceId: row.id,
      applicationId: s.application_id,
      customerName: s.customer_name,
      tokenKind: 'connect_session',
      details: { connector_type: row.connector_type, customer_name: row.customer_name, name: row.name, status: row.status, connect_session_id: s.id },
    } satisfies AuditNote;
    return this.finish(request, reply, claimed.claim, row, reconnect !== undefined);
  }

  /**
   * What every form post checks first: a live session, its CSRF token, a connector type the
   * session offers, and the connector to re-authorize when one is named. Undefined once the
   * page saying why not has been sent.
   */
  async formContext(request: FastifyRequest<{ Params: { connector_type: string }; Body: FormBody }>, reply: FastifyReply): Promise<FormContext | undefined> {
    const s = await this.sessionOr(request, reply);
    if (s === undefined) return undefined;
    const form = request.body ?? {};
    if (!csrfValid(this.ctx, s, form['csrf'])) {
      this.html(reply, 403, messagePage('This form has expired', 'Reload the page and try again.', this.brand));
      return undefined;
    }
    const type = request.params.connector_type;
    if (!allowedTypes(s).includes(type) || !this.ctx.registry.has(type)) {
      this.notOffered(reply);
      return undefined;
    }
    const reconnect = await this.reconnectTarget(s, type, form['reconnect']);
    if (form['reconnect'] !== undefined && reconnect === undefined) {
      this.notOffered(reply);
      return undefined;
    }
    return { s, form, type, reconnect };
  }
}
