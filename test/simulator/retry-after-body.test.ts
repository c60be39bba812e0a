/**
 * A rate-limited answer's body may name the wait: the sidecar's error body reads `{{retry_after}}`
 * (seconds, a number, the Retry-After the answer carries), left out of every other error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const doc = {
  openapi: '3.0.3',
  info: { title: 'Limits', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/things/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } } } } },
      },
    },
  },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    sidecar: parseSidecar(`
error:
  body: { message: "{{message}}", retry_after: "{{retry_after}}" }
rate_limit: { limit: 2, window_seconds: 30 }
resources:
  things: { records: 1, template: { id: "{{id}}" } }
`),
  });
});
afterAll(async () => sim.close());

describe('retry_after in an error body', () => {
  it('is the 429 answer’s Retry-After in seconds, as a number, and absent from other errors', async () => {
    const missing = await fetch(`${sim.url}/things/nope`);
    expect(missing.status).toBe(404);
    expect(Object.keys((await missing.json()) as object)).toEqual(['message']);
    await fetch(`${sim.url}/things/nope`);
    const limited = await fetch(`${sim.url}/things/nope`);
    expect(limited.status).toBe(429);
    const body = (await limited.json()) as { retry_after: unknown };
    expect(typeof body.retry_after).toBe('number');
    expect(body.retry_after).toBe(Number(limited.headers.get('retry-after')));
  });
});
