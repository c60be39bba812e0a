/**
 * The engine's public API: the interpreter (ConnectorRuntime, interpreter.ts), its types, and the
 * throttle a manifest's rate limit builds.
 */
export { ConnectorRuntime } from './interpreter.ts';
export { bucketedThrottle, callBucket, usesBuckets } from './rate-buckets.ts';
export { limiterFor, throttleOf } from './runtime-setup.ts';
export type {
  CallContext,
  CallOptions,
  CallPlan,
  CallStats,
  CheckResult,
  Envelope,
  ListEnvelope,
  RawResult,
  RecordEnvelope,
  Rendered,
  RuntimeOptions,
} from './types.ts';
