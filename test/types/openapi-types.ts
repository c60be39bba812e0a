/**
 * Compile-time tests (checked by `tsc --noEmit`, never run) of generated/openapi.ts, which
 * openapi-typescript makes from the service's /openapi.json: the execute body is typed per
 * connector type, so a client generated from the document alone rejects wrong entities, actions
 * and params.
 */
import type { paths } from '../../generated/openapi.ts';

type ExecuteBody = paths['/api/v1/integrations/connectors/{connector_id}/execute']['post']['requestBody']['content']['application/json'];

export const typedExecuteBodies: ExecuteBody[] = [
  { entity: 'notes', action: 'list', params: { page_size: 5 } },
  { entity: 'notes', action: 'get', params: { note_id: 'not_10000000000000', include: 'transcript' } },
  { entity: 'contacts', action: 'create', params: { role: 'lead', email: 'ada@example.com' } },
  { entity: 'contacts', action: 'search', params: { query: { filter: { eq: { role: 'lead' } } }, limit: 10 } },
];

// @ts-expect-error: notes have no delete action
export const noSuchAction: ExecuteBody = { entity: 'notes', action: 'delete', params: {} };
// @ts-expect-error: page_size is an integer
export const wrongParamType: ExecuteBody = { entity: 'notes', action: 'list', params: { page_size: 'five' } };
// @ts-expect-error: get needs its note_id
export const missingParam: ExecuteBody = { entity: 'notes', action: 'get', params: {} };
