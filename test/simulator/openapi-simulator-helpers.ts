/** Shared by the openapi-simulator*.test.ts files: one HTTP call to a running simulator. */
import type { OpenApiSimulator } from '../../src/simulator/index.ts';

export type Rec = Record<string, unknown>;

/** Calls the simulator with a JSON body (a string is sent as it is); an empty answer reads as {}. */
export async function call(
  sim: OpenApiSimulator,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: 'Bearer pat-1' },
): Promise<{ status: number; headers: Headers; body: Rec }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? {} : (JSON.parse(text) as Rec) };
}
