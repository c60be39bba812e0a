/**
 * OpenTelemetry traces (docs/operations.md): the service started with the standard OTEL_*
 * variables naming an OTLP/HTTP receiver on loopback (JSON, to read it here). An execute sent
 * with a W3C traceparent comes back as one trace: the inbound request's span continues the
 * caller's, the execute's span is its child, the upstream call's span the execute's child (method,
 * host, path template, status, retry count; no credential, no rendered URL). Log lines written
 * inside carry the trace id. Tracing is the process's (the SDK registers globally), so this file
 * turns it on for itself only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { tracingConfigured } from '../../src/service/config.ts';
import { startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

/** OTLP/JSON ids are hex; accept base64 too. */
function hex(id: string | undefined): string {
  if (id === undefined || id === '') return '';
  return /^[0-9a-f]+$/.test(id) && (id.length === 32 || id.length === 16) ? id : Buffer.from(id, 'base64').toString('hex');
}

function attr(s: OtlpSpan, key: string): string | number | undefined {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : undefined);
}

let receiver: Server;
const spans: OtlpSpan[] = [];
const bodies: string[] = [];
let sim: GranolaSimulator;
let h: Harness;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      bodies.push(raw);
      if (req.url === '/v1/traces') {
        const body = JSON.parse(raw) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'switchboard-under-test',
  };
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  expect(tracingConfigured(process.env)).toBe(true);
  sim = await startGranolaSimulator({ size: 3, rateLimit: false });
  h = await startHarness('sqlite', { config: { upstreamThrottle: false, tracing: true, connectorTypes: { granola: { baseUrl: sim.url } } } });
});
afterAll(async () => {
  await h?.close();
  await sim?.close();
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

it('tracing is on only when the OTEL_* variables name an exporter', () => {
  expect(tracingConfigured({})).toBe(false);
  expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x' })).toBe(false);
  expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x/v1/traces' })).toBe(true);
  expect(tracingConfigured({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
  expect(() => tracingConfigured({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(/otlp/);
});

it('an execute with a traceparent is one trace: inbound request → execute → upstream call', async () => {
  const app = await h.createApp('org-traced');
  const token = await h.token(app);
  const c = await h.request('POST', CONNECTORS, {
    token,
    body: { customer_name: 'traced-customer', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
  });
  expect(c.status, c.text).toBe(201);
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpan = '00f067aa0ba902b7';
  const r = await h.request('POST', `${CONNECTORS}/${c.body.id}/execute`, {
    token,
    headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
    body: { entity: 'notes', action: 'list', params: {} },
  });
  expect(r.status, r.text).toBe(200);
  // A refused request logs a line inside its span.
  const refused = await h.request('POST', `${CONNECTORS}/${c.body.id}/execute`, {
    token,
    headers: { traceparent: `00-${traceId}-${callerSpan}-01` },
    body: { entity: 'nope', action: 'list' },
  });
  expect(refused.status).toBe(400);
  // A sync run has its span.
  await h.service.ctx.sync.runOnce(c.body.id, { full: true });
  // Closing flushes the batch to the receiver.
  await h.close();
  const run = spans.find((s) => s.name === 'switchboard sync run');
  expect(run).toBeDefined();
  expect(attr(run!, 'switchboard.connector_type')).toBe('granola');
  expect(attr(run!, 'switchboard.sync.outcome')).toBe('completed');
  expect(attr(run!, 'switchboard.sync.added')).toBe(3);
  const mine = spans.filter((s) => hex(s.traceId) === traceId);
  const server = mine.find((s) => s.name === 'POST /api/v1/integrations/connectors/:connector_id/execute' && hex(s.parentSpanId) === callerSpan);
  expect(server, JSON.stringify(mine.map((s) => s.name))).toBeDefined();
  expect(attr(server!, 'http.response.status_code')).toBe(200);
  const execute = mine.find((s) => s.name === 'switchboard execute' && hex(s.parentSpanId) === hex(server!.spanId));
  expect(execute).toBeDefined();
  expect(attr(execute!, 'switchboard.action')).toBe('list');
  const upstream = mine.find((s) => hex(s.parentSpanId) === hex(execute!.spanId));
  expect(upstream).toBeDefined();
  expect(upstream!.kind).toBe(3); // CLIENT
  expect(attr(upstream!, 'http.request.method')).toBe('GET');
  expect(attr(upstream!, 'server.address')).toBe(new URL(sim.url).host);
  expect(attr(upstream!, 'http.response.status_code')).toBe(200);
  expect(attr(upstream!, 'http.request.resend_count')).toBe(0);
  expect(attr(upstream!, 'switchboard.connector_type')).toBe('granola');
  expect(String(attr(upstream!, 'url.template'))).toMatch(/^\//);
  // Nothing secret or identifying went out.
  const exported = bodies.join('\n');
  for (const secret of [sim.apiKey, token, c.body.id, 'traced-customer', app.client_secret]) expect(exported.includes(secret), secret).toBe(false);
  // The refused request's log line carries the trace id.
  const line = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'request refused' && l['trace_id'] === traceId);
  expect(line, h.logs.slice(-5).join('\n')).toBeDefined();
  expect(line!['span_id']).toMatch(/^[0-9a-f]{16}$/);
});
