/**
 * The proxy route in the OpenAPI document (docs/proxy.md). `{path}` stands for the rest of the
 * URL, slashes included (send them as slashes: an encoded %2F is refused); HEAD is served like GET.
 */
import type { Schema } from '../http/schemas.ts';

const VENDOR_ANSWER: Schema = {
  description:
    "The vendor's own answer, whatever its status (2xx, 4xx, 5xx), passed back unchanged with Switchboard-Proxy-Source: upstream and the headers a client needs (Content-Type, Link, ETag, Location, Retry-After, rate-limit headers)",
  headers: {
    'Switchboard-Proxy-Source': {
      schema: { enum: ['upstream', 'switchboard'] },
      description: "upstream: the vendor's answer; switchboard: Switchboard's own problem details",
    },
  },
  content: { '*/*': { schema: {} } },
};

/** The proxy's paths: one operation per method the route serves. */
export function proxyOpenApiPaths(h: {
  problems: (...s: number[]) => Record<string, Schema>;
  orgHeader: Schema;
  connectorIdParam: Schema;
  authed: number[];
}): Record<string, Schema> {
  const pathParam: Schema = {
    name: 'path',
    in: 'path',
    required: true,
    description:
      "The path under the connector's base URL, slashes included; `..`, `//host`, absolute URLs and encoded slashes or dots are 400 proxy_path_refused",
    schema: { type: 'string' },
  };
  const op = (method: string, body: boolean): Schema => ({
    operationId: `proxy${method}`,
    summary: `${method} any endpoint under the connector's base URL with its credentials, throttle and retries${method === 'Get' ? ' (HEAD is served too)' : ''}`,
    parameters: [h.connectorIdParam, pathParam, h.orgHeader],
    ...(body ? { requestBody: { required: false, content: { '*/*': { schema: {} } } } } : {}),
    responses: { default: VENDOR_ANSWER, ...h.problems(...h.authed, 404, 502, 503) },
  });
  return {
    '/api/v1/integrations/connectors/{connector_id}/proxy/{path}': {
      get: op('Get', false),
      post: op('Post', true),
      put: op('Put', true),
      patch: op('Patch', true),
      delete: op('Delete', false),
    },
  };
}
