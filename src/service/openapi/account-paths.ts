/**
 * The OpenAPI document's paths: tokens (the application's, scoped to one customer, a widget's) and the organization's customers.
 */
import { type Schema } from '../http/schemas.ts';
import { WorkspacesQuerySchema } from '../http/account-schemas.ts';
import { AUTHED, json, orgHeader, problems, ref, queryParams } from './helpers.ts';

export function accountPaths(): Record<string, Schema> {
  return {
    '/api/v1/account/applications/token': {
      post: {
        operationId: 'createAccessToken',
        summary: 'Exchange client_id and client_secret for an access token',
        security: [],
        requestBody: { required: true, content: json(ref('TokenRequest')) },
        responses: { 200: { description: 'Token', content: json(ref('TokenResponse')) }, ...problems(400, 401, 413, 415) },
      },
    },
    '/api/v1/account/applications/scoped-token': {
      post: {
        operationId: 'createScopedToken',
        summary: 'A short-lived access token limited to one customer of this organization',
        description:
          "With it, every connector endpoint answers 404 connector_not_found for other customers' connectors; lists, search and MCP show its customer's only; naming another customer is 403 customer_forbidden; endpoints that do not keep to one customer refuse it with 403. Lives at most 900 s.",
        parameters: [orgHeader],
        requestBody: { required: true, content: json(ref('ScopedTokenRequest')) },
        responses: { 200: { description: 'Token', content: json(ref('ScopedTokenResponse')) }, ...problems(...AUTHED) },
      },
    },
    '/api/v1/account/applications/widget-token': {
      post: {
        operationId: 'createWidgetToken',
        summary: "Airbyte's widget token: a Connect session for one customer, restricted to one embedding origin",
        description:
          'The pages of the session may be framed by allowed_origin only (CSP frame-ancestors), its cookie works in that frame, and the result message (switchboard:connected) is posted to that origin only. The first page, served before the session is known, may be framed by the origin the link names.',
        parameters: [orgHeader],
        requestBody: { required: true, content: json(ref('WidgetTokenRequest')) },
        responses: { 200: { description: 'The session', content: json(ref('WidgetTokenResponse')) }, ...problems(...AUTHED) },
      },
    },
    '/api/v1/workspaces': {
      get: {
        operationId: 'listWorkspaces',
        summary: "The organization's customers (Airbyte: workspaces) as {id, name}",
        parameters: [orgHeader, ...queryParams(WorkspacesQuerySchema)],
        responses: { 200: { description: 'A page', content: json(ref('WorkspaceList')) }, ...problems(400, 401, 403, 429) },
      },
    },
  };
}
