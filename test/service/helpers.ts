/**
 * Test harness for the hosted service (test/helpers/hosted.ts, re-exported here for the service
 * tests), and validation of responses against the service's own OpenAPI document.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/service/index.ts';
import type { Reply } from '../helpers/hosted.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export * from '../helpers/hosted.ts';

// OpenAPI validation of real responses.

let openApiAjv: Ajv2020 | undefined;
const OPENAPI_ID = 'https://switchboard.test/openapi.json';

function pointerEscape(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Validate a response against the OpenAPI document: the operation `method pathTemplate` must
 * declare the status, and the body must match its schema (problem details for errors).
 * Returns the validation errors ([] when valid).
 */
export function openApiErrors(method: string, pathTemplate: string, reply: Reply): string[] {
  const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };
  if (openApiAjv === undefined) {
    openApiAjv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(openApiAjv);
    openApiAjv.addSchema({ ...doc, $id: OPENAPI_ID });
  }
  const op = doc.paths[pathTemplate]?.[method.toLowerCase()];
  if (op === undefined) return [`no operation ${method} ${pathTemplate}`];
  const response = op.responses[String(reply.status)];
  if (response === undefined) return [`${method} ${pathTemplate} does not declare status ${reply.status}`];
  if (response.content === undefined) return reply.text === '' ? [] : [`status ${reply.status} declares no body but got ${reply.text.slice(0, 100)}`];
  const contentType = (reply.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (response.content[contentType] === undefined) return [`status ${reply.status} does not declare content type ${contentType}`];
  const pointer = `#/paths/${pointerEscape(pathTemplate)}/${method.toLowerCase()}/responses/${reply.status}/content/${pointerEscape(contentType)}/schema`;
  const validate = openApiAjv.getSchema(`${OPENAPI_ID}${pointer}`);
  if (validate === undefined) return [`cannot resolve ${pointer}`];
  if (validate(reply.body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
