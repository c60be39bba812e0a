/**
 * The fleet bench's HTTP client of the service API (scripts/bench/fleet.ts), shared with the
 * probe process (fleet-probe.ts).
 */
import { request } from 'undici';

export interface Api {
  url: string;
  token: string;
}

export async function api(a: Api, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await request(`${a.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${a.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.statusCode, json: (await r.body.json()) as Record<string, unknown> };
}

/** One execute of Granola notes; its wall time in ms. */
export async function execute(a: Api, id: string, action: 'list' | 'get', params: Record<string, unknown>): Promise<number> {
  const t = performance.now();
  const r = await api(a, 'POST', `/integrations/connectors/${id}/execute`, { entity: 'notes', action, params });
  if (r.status !== 200) throw new Error(`execute ${id}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  return performance.now() - t;
}
