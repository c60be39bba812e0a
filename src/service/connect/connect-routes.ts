/**
 * The Connect UI over HTTP: the session endpoint (organization token) and the page (public,
 * authenticated by the session cookie). The page's routes live in their own plugin so that their
 * HTML error page, form-body parser and security headers apply to them alone; each page is a
 * function of connect-pages.ts, and what they share (security headers, session, forms) is in
 * connect-page-kit.ts.
 *
 * Security headers on every page: a CSP with no inline code (script and style from 'self' only),
 * form-action limited to this service and the configured OAuth consent pages, frame-ancestors
 * from SWITCHBOARD_CONNECT_FRAME_ANCESTORS (default 'none'), no-store, no Referer.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authentication.ts';
import type { ServiceContext } from '../context.ts';
import { checkBody } from '../../errors/body-check.ts';
import { sendProblem, toProblem } from '../http/problem.ts';
import { customerNames } from '../connectors/customers.ts';
import { brandCss } from './connect-brand.ts';
import { messagePage } from './connect-html.ts';
import { ConnectPageKit, CONNECT_EXCHANGE_PATH, type FormBody } from './connect-page-kit.ts';
import { credentialsRoute, donePage, exchangeRoute, homePageRoute, oauthReturnRoute, oauthStartRoute, typePageRoute } from './connect-pages.ts';
import { ConnectSessionSchema, CreateConnectSessionRequestSchema } from './connect-schemas.ts';
import { CONNECT_SESSIONS_PATH, createConnectSession, type CreateSessionBody } from './connect-sessions.ts';

export { CONNECT_DONE_PATH, CONNECT_EXCHANGE_PATH, CONNECT_OAUTH_RETURN_PATH, CONNECT_TYPE_PATH } from './connect-page-kit.ts';
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

/** The pages' form-body parser (refusing what the JSON body checks refuse) and their HTML error page. */
function pageParsing(app: FastifyInstance, kit: ConnectPageKit): void {
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
    if (p.status >= 500)
      return kit.html(reply, p.status, messagePage('Something went wrong', 'The connection could not be completed. Try again in a moment.', kit.brand));
    return kit.html(reply, p.status, messagePage('This request could not be handled', p.detail, kit.brand));
  });
}

/** The script and style sheets (the brand's accent colour among them), and no favicon. */
function pageAssets(app: FastifyInstance, kit: ConnectPageKit): void {
  const assets = new Map(
    Object.entries(ASSETS).map(([path, a]) => [path, { body: readFileSync(new URL(`./assets/${a.file}`, import.meta.url)), type: a.type }]),
  );
  // The accent colour (empty without one; the pages link it only when there is one).
  assets.set('/connect/assets/brand.css', { body: Buffer.from(brandCss(kit.brand)), type: 'text/css; charset=utf-8' });
  const pub = { config: { auth: 'public' as const } };
  for (const [path, a] of assets) {
    app.get(path, pub, async (_request, reply) =>
      reply.type(a.type).header('cache-control', 'public, max-age=300').header('x-content-type-options', 'nosniff').send(a.body),
    );
  }
  // Browsers ask for /favicon.ico on their own; the pages name their icon (the operator's logo
  // or none), so this answers "no content" without asking for credentials.
  app.get('/favicon.ico', pub, async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());
}

function connectPages(ctx: ServiceContext) {
  return async function pages(app: FastifyInstance): Promise<void> {
    const kit = new ConnectPageKit(ctx);
    pageParsing(app, kit);
    pageAssets(app, kit);
    donePage(app, kit);
    homePageRoute(app, kit);
    exchangeRoute(app, kit);
    typePageRoute(app, kit);
    credentialsRoute(app, kit);
    oauthStartRoute(app, kit);
    oauthReturnRoute(app, kit);
  };
}
