/**
 * The OpenAPI document's paths: the service's own endpoints: liveness, readiness and this document.
 */
import type { Schema } from '../http/schemas.ts';
import { json, problems, ref } from './helpers.ts';

export function metaPaths(): Record<string, Schema> {
  return {
    '/healthz': {
      get: { operationId: 'healthz', summary: 'Liveness', security: [], responses: { 200: { description: 'Up', content: json(ref('Health')) } } },
    },
    '/readyz': {
      get: {
        operationId: 'readyz',
        summary: 'Readiness: the database answers',
        security: [],
        responses: { 200: { description: 'Ready', content: json(ref('Health')) }, ...problems(503) },
      },
    },
    '/openapi.json': {
      get: {
        operationId: 'openapi',
        summary: 'This document',
        security: [],
        responses: { 200: { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } },
      },
    },
  };
}
