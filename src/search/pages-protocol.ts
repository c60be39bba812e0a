/**
 * The sync worker's side of the record writer's worker (record-writer-worker.ts): the plain data
 * a sync's pages job needs to cross to the worker, and the host that runs those jobs there. The
 * host itself is the sync module's (src/sync/pages-worker.ts): the record writer carries its jobs
 * and parts without knowing their shape, and its worker loads the host from the module named in
 * RecordWriterOptions.pages, so that this folder imports nothing from the sync module above it.
 */
import type { MessagePort } from 'node:worker_threads';
import type { RetryPolicy, ThrottleRefused } from '../http/index.ts';
import type { UpstreamTransportOptions } from '../http/upstream-transport.ts';
import type { ChangeCounts } from './changes.ts';
import type { SearchEntityDef } from './query.ts';

/** What a job needs to build the connector's runtime (plain data). */
export interface PagesConnector {
  id: string;
  /** The manifest's file, loaded here once. */
  file: string;
  authVariant: string;
  credentials: Record<string, unknown>;
  /** The row's credentials as stored: a cached runtime is reused while they are unchanged. */
  version: string;
  baseUrl?: string | undefined;
  deadlineMs: number;
  /** Whether the main thread throttles the connector (its throttle is asked for each request). */
  throttled: boolean;
}

/** The sync worker's upstream transport: the service's own (its options), or a module's (a test or bench routing requests). */
export type PagesFetch = { transport: UpstreamTransportOptions } | { module: string; data?: unknown };

/** The main thread's answer to an acquire. */
export interface ThrottledMessage {
  op: 'throttled';
  n: number;
  refused?: { reason: ThrottleRefused['reason']; waitMs: number };
  error?: { name: string; message: string };
}

export interface PagesHostOptions {
  port: MessagePort;
  fetch: PagesFetch;
  retry?: Partial<RetryPolicy> | undefined;
  /** Store a part's records (in the writer's turns), and delete by id. */
  upsert(connectorId: string, entity: string, def: SearchEntityDef, records: Record<string, unknown>[], syncRun: string): Promise<ChangeCounts>;
  deleteRecords(connectorId: string, entity: string, ids: string[]): Promise<number>;
  /** The store's clock, from the main thread's latest message. */
  setNow(now: number): void;
  toWire(e: unknown): unknown;
}

export interface PagesHost {
  /** Handle a message of this protocol; false when it is not one. */
  handle(m: { op: string }): boolean;
  /** Jobs running, to wait for on close. */
  readonly running: Set<Promise<void>>;
  /** Stop every job (the worker is closing) and the transport. */
  close(): Promise<void>;
}

/** The module the worker loads the host from (its URL in RecordWriterOptions.pages.host). */
export interface PagesHostModule {
  pagesHost(o: PagesHostOptions): PagesHost;
}
