/** The Connect UI's part of the OpenAPI document: the session endpoint, and the page's routes (HTML, public). */
import type { Schema } from '../http/schemas.ts';
import { ConnectExchangeRequestSchema, ConnectSessionSchema, CreateConnectSessionRequestSchema } from './connect-schemas.ts';
import { CONNECT_PAGE_PATH, CONNECT_SESSIONS_PATH } from './connect-sessions.ts';

export const connectOpenApiSchemas: Record<string, Schema> = {
  CreateConnectSessionRequest: CreateConnectSessionRequestSchema,
  ConnectSession: ConnectSessionSchema,
  ConnectExchangeRequest: ConnectExchangeRequestSchema,
};

interface Helpers {
  json: (schema: Schema) => Schema;
  ref: (name: string) => Schema;
  problems: (...statuses: number[]) => Record<string, Schema>;
  orgHeader: Schema;
  authed: number[];
}

const htmlPage = (description: string): Schema => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const typeParam: Schema = { name: 'connector_type', in: 'path', required: true, schema: { type: 'string' } };
const PAGE = 'Connect UI page (HTML for browsers; authenticated by the session cookie, forms carry a CSRF token)';

export function connectOpenApiPaths(h: Helpers): Record<string, Schema> {
  return {
    [CONNECT_SESSIONS_PATH]: {
      post: {
        operationId: 'createConnectSession',
        summary: 'Create a Connect UI session: a short-lived link where one customer connects their own accounts',
        description:
          "The token only lets the page create, re-authorize and check this customer's connectors of the allowed types; it is not an API token. Send the user to `url` (the token is in its fragment, so it never reaches a server log).",
        parameters: [h.orgHeader],
        requestBody: { required: true, content: h.json(h.ref('CreateConnectSessionRequest')) },
        responses: { 201: { description: 'Created', content: h.json(h.ref('ConnectSession')) }, ...h.problems(...h.authed) },
      },
    },
    [CONNECT_PAGE_PATH]: {
      get: {
        operationId: 'connectPage',
        summary: `${PAGE}: the connector types offered and the customer's connectors`,
        security: [],
        responses: { 200: htmlPage('The page'), 401: htmlPage('Unknown session'), 410: htmlPage('Expired or used session') },
      },
    },
    '/connect/session': {
      post: {
        operationId: 'connectExchange',
        summary: "The page's script exchanges the fragment token for an HttpOnly session cookie (once per token)",
        description:
          "JSON only: any other content type, an HTML form (application/x-www-form-urlencoded) included, is 415 unsupported_media_type, so another site cannot plant its own session in a visitor's browser (login CSRF): a cross-site JSON request needs a CORS preflight this service never grants.",
        security: [],
        requestBody: { required: true, content: h.json(h.ref('ConnectExchangeRequest')) },
        responses: { 204: { description: 'Cookie set' }, ...h.problems(400, 401, 415) },
      },
    },
    '/connect/types/{connector_type}': {
      get: {
        operationId: 'connectTypePage',
        summary: `${PAGE}: the forms of one connector type (?reconnect=<connector id> to re-authorize)`,
        security: [],
        parameters: [typeParam, { name: 'reconnect', in: 'query', required: false, schema: { type: 'string' } }],
        responses: {
          200: htmlPage('The forms'),
          401: htmlPage('Unknown session'),
          404: htmlPage('Type not offered'),
          410: htmlPage('Expired or used session'),
        },
      },
    },
    '/connect/types/{connector_type}/credentials': {
      post: {
        operationId: 'connectSubmitCredentials',
        summary: `${PAGE}: submit a credential form (create or re-authorize)`,
        security: [],
        parameters: [typeParam],
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
        responses: {
          303: { description: 'Connected: to /connect/done (post/redirect/get)' },
          400: htmlPage('Form errors'),
          403: htmlPage('Bad CSRF token'),
          409: htmlPage('Another submit is connecting with this session right now'),
          424: htmlPage('The third-party API rejected the credentials (in plain words, its own text as detail)'),
          410: htmlPage('Expired or used session'),
        },
      },
    },
    '/connect/types/{connector_type}/oauth': {
      post: {
        operationId: 'connectStartOAuth',
        summary: `${PAGE}: start the service-side OAuth flow; the provider returns to /connect/oauth/return`,
        security: [],
        parameters: [typeParam],
        requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } } },
        responses: { 303: { description: "To the provider's consent page" }, 403: htmlPage('Bad CSRF token'), 410: htmlPage('Expired or used session') },
      },
    },
    '/connect/oauth/return': {
      get: {
        operationId: 'connectOAuthReturn',
        summary: `${PAGE}: where the OAuth callback sends the user back (?type, ?secret_id or ?error)`,
        security: [],
        responses: {
          303: { description: 'Connected: to /connect/done (post/redirect/get)' },
          400: htmlPage('The provider refused'),
          409: htmlPage('Another submit is connecting with this session right now'),
          410: htmlPage('Expired or used session'),
        },
      },
    },
    '/connect/done': {
      get: {
        operationId: 'connectDone',
        summary: `${PAGE}: the success page of a finished connection (?connector_id; safe to reload); tells window.opener and follows redirect_url`,
        security: [],
        parameters: [{ name: 'connector_id', in: 'query', required: true, schema: { type: 'string' } }],
        responses: { 200: htmlPage('Connected'), 401: htmlPage('Unknown session'), 404: htmlPage("Not this customer's connector") },
      },
    },
    '/connect/assets/connect.js': {
      get: {
        operationId: 'connectScript',
        summary: "The page's script",
        security: [],
        responses: { 200: { description: 'JavaScript', content: { 'text/javascript': { schema: { type: 'string' } } } } },
      },
    },
    '/connect/assets/connect.css': {
      get: {
        operationId: 'connectStyles',
        summary: "The page's stylesheet",
        security: [],
        responses: { 200: { description: 'CSS', content: { 'text/css': { schema: { type: 'string' } } } } },
      },
    },
    '/connect/assets/brand.css': {
      get: {
        operationId: 'connectBrandStyles',
        summary: "The operator's accent colour (SWITCHBOARD_CONNECT_ACCENT_COLOR; empty without one)",
        security: [],
        responses: { 200: { description: 'CSS', content: { 'text/css': { schema: { type: 'string' } } } } },
      },
    },
    '/favicon.ico': {
      get: {
        operationId: 'favicon',
        summary: 'No icon here (the pages name theirs): 204 without a session, so browsers get no 401',
        security: [],
        responses: { 204: { description: 'No content' } },
      },
    },
  };
}
