/**
 * The OpenAPI document's paths: the service-side OAuth flow: its start and the provider's redirect target.
 */
import { OAUTH_CALLBACK_PATH, type Schema } from '../http/schemas.ts';
import { AUTHED, json, orgHeader, problems, ref } from './helpers.ts';

export function oauthPaths(): Record<string, Schema> {
  return {
    '/api/v1/integrations/connectors/oauth/initiate': {
      post: {
        operationId: 'initiateOAuth',
        summary: 'Start a service-side OAuth flow',
        description:
          "When the type's OAuth URLs or base URL name non-secret credential fields (Zendesk: https://{{credentials.subdomain}}.zendesk.com), send them in `credentials`: each is checked against its field's pattern (400 invalid_oauth_credentials, nothing stored), kept server side with the state, used for the code exchange and stored with the tokens.",
        parameters: [orgHeader],
        requestBody: { required: true, content: json(ref('OAuthInitiateRequest')) },
        responses: { 200: { description: 'Send the user to consent_url', content: json(ref('OAuthInitiateResponse')) }, ...problems(...AUTHED, 501) },
      },
    },
    [OAUTH_CALLBACK_PATH]: {
      get: {
        operationId: 'oauthCallback',
        summary: "The OAuth provider's redirect target (register it with each OAuth app); public",
        security: [],
        parameters: ['state', 'code', 'error', 'error_description'].map((name) => ({
          name,
          in: 'query',
          required: name === 'state',
          schema: { type: 'string' },
        })),
        responses: {
          302: {
            description: 'To redirect_url with ?secret_id=... (or ?error=...&error_description=... when the provider refused or the exchange failed)',
            headers: { Location: { schema: { type: 'string', format: 'uri' } } },
          },
          ...problems(400),
        },
      },
    },
  };
}
