/**
 * What the OpenAPI document's path groups share (openapi.ts composes them): schema references,
 * JSON content, the problem responses of each status, and the common parameters.
 */
import { ERROR_CODES } from '../../errors/index.ts';
import type { Schema } from '../http/schemas.ts';

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Schema): Schema => ({ 'application/json': { schema } });
// Callers that opt in to Airbyte's envelope get the same problem with message and errors[].message added.
const problemRef: Schema = { 'application/problem+json': { schema: { anyOf: [ref('Problem'), ref('AirbyteProblem')] } } };

/** Problem responses an operation can produce, by status (500 internal_error can happen anywhere). */
export function problems(...statuses: number[]): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  for (const s of [...new Set([...statuses, 500])].sort()) {
    const codes = Object.entries(ERROR_CODES)
      .filter(([, d]) => d.status === s)
      .map(([c]) => c);
    out[String(s)] = { description: `Problem details (codes with this status: ${codes.join(', ') || 'see table'})`, content: problemRef };
  }
  return out;
}

export const AUTHED = [400, 401, 403, 413, 415, 429];
export const connectorIdParam: Schema = {
  name: 'connector_id',
  in: 'path',
  required: true,
  description: "Connector id (UUID). Unknown ids, malformed ids and other organizations' ids all answer 404 connector_not_found.",
  schema: { type: 'string' },
};
export const airbyteHeader: Schema = {
  name: 'X-ADP-Agent-SDK',
  in: 'header',
  required: false,
  description:
    "Sent by Airbyte's agent SDK (any non-empty value): execute answers in Airbyte's envelope (AirbyteExecuteResponse) and errors carry message and errors[].message (AirbyteProblem). Without it (and for applications not created with the airbyte envelope) nothing changes.",
  schema: { type: 'string' },
};
export const orgHeader: Schema = {
  name: 'X-Organization-Id',
  in: 'header',
  required: false,
  description:
    'Required when the application can access several organizations (400 organization_required when missing; 403 organization_forbidden when not accessible)',
  schema: { type: 'string' },
};

export function queryParams(schema: Schema): Schema[] {
  const props = (schema['properties'] ?? {}) as Record<string, Schema>;
  return Object.entries(props).map(([name, s]) => ({ name, in: 'query', required: false, schema: s }));
}
