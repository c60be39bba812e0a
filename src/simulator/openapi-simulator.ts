/**
 * The generic stateful simulator: any OpenAPI 3 description becomes a local fake of its API.
 *
 * - Every request is checked against the description (description.ts): unknown paths answer 404,
 *   other methods 405, missing credentials 401, bad parameters or bodies 400 — all in the
 *   vendor's error shape (the sidecar's `error.body`, else a sample of the description's error
 *   response schema with its message and code fields filled in).
 * - Resources are inferred from collection/item path pairs (`/projects`, `/projects/{project_gid}`,
 *   nested collections like `/projects/{project_gid}/sections` included): each is seeded with
 *   deterministic records sampled from its response schema (openapi-sampler, ids from a seeded
 *   PRNG), and create/get/update/delete/list keep state, so a create then a get returns what was
 *   created. Envelopes (`{data: ...}`) are found in the schemas and put back on the way out.
 * - Lists page the way the list operation's parameters say (an opaque cursor or offset token,
 *   a page number, a limit), with the next cursor where the response schema carries one.
 * - Other operations (actions such as /projects/{gid}/duplicate) answer a sample of their
 *   success response once the request is valid.
 * - The sidecar (sidecar.ts) adds what a description cannot say: the error body, accepted
 *   tokens, rate limits and their headers, cursor fields, page-size caps.
 *
 * The front end's parts live in openapi/ (resources, records and seeding, errors, writes, lists and
 * pages, declared rules, credentials, the request pipeline); the store, cursors, rate limits,
 * OAuth and error types it shares with the GraphQL front end in core/.
 */
import { randomUUID } from 'node:crypto';
import { sample as sampleSchema } from 'openapi-sampler';
import { RateCounter } from './core/rate-limit.ts';
import { mintId } from './core/store.ts';
import { clone, idAt } from './core/values.ts';
import { Description, loadDescription, type Json } from './description.ts';
import { credentials } from './openapi/credentials.ts';
import { errorAnswers } from './openapi/errors.ts';
import { requestHandler } from './openapi/handle.ts';
import { newId } from './openapi/ids.ts';
import { lister } from './openapi/lists.ts';
import { pager } from './openapi/pages.ts';
import { recordRules, type RecordRules } from './openapi/records.ts';
import { buildResources } from './openapi/resources.ts';
import { ruleAnswers } from './openapi/rule-answers.ts';
import { nestedLinks, seedStore } from './openapi/seed.ts';
import type { OpenApiContext, OpenApiSimulator, OpenApiSimulatorOptions, Resource } from './openapi/types.ts';
import { writes } from './openapi/writes.ts';
import { loadSidecar, type Sidecar } from './sidecar.ts';
import { startSimulator } from './sim-server.ts';

export {
  SimulatorError,
  type OpenApiSimulator,
  type OpenApiSimulatorOptions,
  type OperationContext,
  type OperationHandler,
  type RateLimit,
  type Resource,
  type StoredRecord,
} from './openapi/types.ts';

/** Start a simulator of an OpenAPI description on a loopback port. */
export async function startOpenApiSimulator(options: OpenApiSimulatorOptions): Promise<OpenApiSimulator> {
  const d = typeof options.description === 'string' ? new Description(await loadDescription(options.description)) : options.description;
  const sidecar: Sidecar = typeof options.sidecar === 'string' ? loadSidecar(options.sidecar) : (options.sidecar ?? {});
  const ctx = context(d, sidecar, options);
  const records = recordRules(ctx);
  const nested = nestedLinks(ctx, records);
  seedStore(ctx, records, nested.linkOf);
  const errors = errorAnswers(ctx);
  const counter = new RateCounter(options.rateLimit === false ? undefined : (options.rateLimit ?? sidecar.rate_limit));
  const list = lister(ctx, records, pager(ctx, errors));
  const creds = credentials(ctx, errors);
  const rules = ruleAnswers(ctx, records, errors);
  const handle = requestHandler(ctx, { errors, records, writes: writes(ctx, records), list, nested, credentials: creds, rules, counter });
  // Headers the vendor sends on every answer (a request id), a UUID filled in per answer.
  const extra = sidecar.response_headers;
  const answer: typeof handle =
    extra === undefined
      ? handle
      : (req) => {
          const r = handle(req);
          const id = randomUUID();
          const headers = Object.fromEntries(Object.entries(extra).map(([k, v]) => [k.toLowerCase(), v.replace(/\{\{\s*request_id\s*\}\}/g, id)]));
          return { ...r, headers: { ...headers, ...r.headers } };
        };
  const sim = await startSimulator(answer, {
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
  });
  return {
    ...sim,
    description: d,
    sidecar,
    resources: ctx.resources,
    seed: ctx.seed,
    tokens: creds.tokens,
    oauth: creds.oauth,
    jwtKeys: creds.jwtKeys,
    tokenExpiry: creds.tokenExpiry,
    setRateLimit: (limit) => counter.set(limit === false ? undefined : limit),
    resetRateLimit: () => counter.reset(),
    expireAccessTokens: creds.expireAccessTokens,
    closeScrolls: rules.closeScrolls,
    ...recordChanges(ctx, records),
    reset: () => {
      sim.reset();
      rules.closeScrolls();
      counter.reset();
    },
  };
}

/** The description, sidecar and options, the resources, and the schema samples every part reads. */
function context(d: Description, sidecar: Sidecar, options: OpenApiSimulatorOptions): OpenApiContext {
  const samples = new Map<string, unknown>();
  const peek = (pointer: string | undefined): unknown => {
    if (pointer === undefined) return {};
    if (!samples.has(pointer)) samples.set(pointer, sampleSchema({ $ref: pointer } as never, { skipWriteOnly: true, quiet: true }, d.doc));
    return samples.get(pointer);
  };
  return {
    d,
    sidecar,
    options,
    seed: options.seed ?? 1,
    ...buildResources(d, sidecar),
    sample: (pointer) => clone(peek(pointer)),
    peek,
    anyErrorRef: d.operations.find((o) => o.errorRef !== undefined)?.errorRef,
  };
}

/** Changing upstream data without the API (tests): addRecord, updateRecord, removeRecord. */
function recordChanges(ctx: OpenApiContext, records: RecordRules): Pick<OpenApiSimulator, 'addRecord' | 'updateRecord' | 'removeRecord'> {
  const resourceNamed = (name: string): Resource => {
    const r = ctx.resources.get(name);
    if (r === undefined) throw new Error(`the simulator has no resource ${name} (it has ${[...ctx.resources.keys()].join(', ')})`);
    return r;
  };
  return {
    addRecord: (name, fields) => {
      const r = resourceNamed(name);
      const mint = (like: unknown): string | number => mintId(ctx.seed, r.name, r, (rand) => newId(rand, like, true));
      const record = records.newRecord(r, mint, r.records.size + 1, fields === undefined ? undefined : (clone(fields) as Json));
      r.records.set(String(idAt(record, r.idField)), { record, parents: {} });
      return record;
    },
    updateRecord: (name, id, fields) => {
      const r = resourceNamed(name);
      const s = r.records.get(id);
      if (s === undefined) return undefined;
      Object.assign(s.record, clone(fields ?? {}));
      records.stamp(r, s.record, 'updated', new Date().toISOString());
      return s.record;
    },
    removeRecord: (name, id) => resourceNamed(name).records.delete(id),
  };
}
