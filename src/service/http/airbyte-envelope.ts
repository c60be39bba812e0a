/**
 * Airbyte's envelope, opt-in, for callers of Airbyte's agent SDK (hosted mode): a request that
 * carries `X-ADP-Agent-SDK` (the SDK sends it on every call), or any request of an application
 * created with `--envelope airbyte`, gets
 *
 * - execute answers as `{status: "success", result, connector_metadata, execution_metadata:
 *   {connector_instance_id, execution_time_ms}}`: a list's `result` is the records and
 *   `connector_metadata` its meta; a get/create/update's `result` is the record; a search's
 *   `result` is the whole `{data, meta}`;
 * - errors as the same problem details plus a top-level `message` (= detail) and `errors[]`
 *   entries with `message` (and `userPresentableMessage`, which the SDK reads first), so the
 *   SDK's error text is ours.
 *
 * Every other request gets today's envelope, byte for byte.
 */
import type { FastifyRequest } from 'fastify';
import type { ErrorDetail } from '../../errors/index.ts';

/** The header Airbyte's agent SDK sends on every request (value "airbyte-agent-sdk"). */
export const AIRBYTE_SDK_HEADER = 'x-adp-agent-sdk';

/** Search's names: ours, and Airbyte's since April 2026. */
export const SEARCH_ACTIONS: ReadonlySet<string> = new Set(['search', 'context_store_search']);

/** Whether this request gets Airbyte's envelope. */
export function speaksAirbyte(request: FastifyRequest): boolean {
  const h = request.headers[AIRBYTE_SDK_HEADER];
  return (h !== undefined && h !== '') || request.principal?.airbyteEnvelope === true;
}

export interface AirbyteExecuteEnvelope {
  status: 'success';
  result: unknown;
  connector_metadata: Record<string, unknown> | null;
  execution_metadata: { connector_instance_id: string; execution_time_ms: number };
}

/** An execute answer (our envelope, or the search response) in Airbyte's envelope. */
export function airbyteExecuteEnvelope(out: unknown, action: string, connectorId: string, elapsedMs: number): AirbyteExecuteEnvelope {
  const execution_metadata = { connector_instance_id: connectorId, execution_time_ms: Math.max(0, Math.round(elapsedMs)) };
  if (SEARCH_ACTIONS.has(action)) return { status: 'success', result: out, connector_metadata: null, execution_metadata };
  const envelope = out as { data: unknown; meta?: Record<string, unknown> };
  return { status: 'success', result: envelope.data, connector_metadata: envelope.meta ?? null, execution_metadata };
}

/** What Airbyte's fields are made from: a problem's detail and errors (problem.ts's Problem). */
interface ProblemBody {
  detail: string;
  errors?: ErrorDetail[] | undefined;
}

export type AirbyteProblem<P extends ProblemBody = ProblemBody> = Omit<P, 'errors'> & {
  message: string;
  errors: { path?: string; message: string; userPresentableMessage: string }[];
};

/** A problem with what Airbyte's SDK reads from an error body added (nothing of ours removed). */
export function airbyteProblem<P extends ProblemBody>(p: P): AirbyteProblem<P> {
  const errors =
    p.errors !== undefined && p.errors.length > 0
      ? p.errors.map((e) => ({ ...e, userPresentableMessage: e.path === '/' || e.path === '' ? e.message : `${e.path} ${e.message}` }))
      : [{ message: p.detail, userPresentableMessage: p.detail }];
  return { ...p, message: p.detail, errors };
}
