/** JSON Schemas of the connect-session endpoint and the page's token exchange (also in the OpenAPI document). */
import type { Schema } from '../http/schemas.ts';
import { customerAliasProperties } from '../connectors/customer-aliases.ts';

export const CreateConnectSessionRequestSchema: Schema = {
  title: 'CreateConnectSessionRequest',
  type: 'object',
  additionalProperties: false,
  required: ['customer_name'],
  properties: {
    customer_name: { type: 'string', minLength: 1, maxLength: 200, description: 'The customer whose connectors the page creates, re-authorizes and checks' },
    ...customerAliasProperties({ type: 'string', minLength: 1, maxLength: 200 }),
    allowed_connector_types: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: { type: 'string', minLength: 1, maxLength: 100 },
      description: 'Connector types the page offers (default: every type of this deployment)',
    },
    redirect_url: {
      type: 'string',
      format: 'uri',
      maxLength: 2000,
      description: 'Where the page sends the user when done, with ?connector_id=...&connector_type=... added',
    },
  },
};

export const ConnectSessionSchema: Schema = {
  title: 'ConnectSession',
  type: 'object',
  additionalProperties: false,
  required: ['token', 'url', 'expires_at'],
  properties: {
    token: { type: 'string', description: 'The session token (sbx_...): short-lived, one customer, usable only by the Connect UI; already in url' },
    url: { type: 'string', format: 'uri', description: 'Open this in a browser (a new window, a popup or a redirect): <public url>/connect#session=<token>' },
    expires_at: { type: 'string', format: 'date-time', description: 'The link must be opened before then; the page works until then' },
  },
};

export const ConnectExchangeRequestSchema: Schema = {
  title: 'ConnectExchangeRequest',
  type: 'object',
  additionalProperties: false,
  required: ['token'],
  properties: { token: { type: 'string', minLength: 1, maxLength: 200 } },
};
